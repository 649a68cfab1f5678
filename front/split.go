package front

import "strings"

// Piece is one statement of a multi-statement string: its text, trimmed of
// surrounding whitespace and comments, and the byte offset in the whole
// string where that text starts (to shift error positions if wanted).
type Piece struct {
	Text   string
	Offset int
}

// Split breaks a multi-statement string at top-level semicolons (outside
// strings, quoted identifiers, comments and parentheses) and drops empty
// statements, including ones that hold only comments. Text that does not
// lex (an unterminated string, say) ends up in the last statement, where
// Parse reports it.
func Split(sql string) []string {
	pieces := SplitPieces(sql)
	out := make([]string, len(pieces))
	for i, p := range pieces {
		out[i] = p.Text
	}
	return out
}

// SplitPieces is Split that also reports where each statement starts.
func SplitPieces(sql string) []Piece {
	l := &lexer{src: sql, tolerant: true, dangling: -1}
	toks, _ := l.all() // tolerant lexing does not fail
	if l.dangling >= 0 {
		// Keep an unterminated comment, so that Parse reports it.
		toks = append(toks, token{kind: tkOp, val: "/*", pos: l.dangling, end: len(sql)})
	}
	var pieces []Piece
	first, depth := -1, 0
	flush := func(last int) {
		if first >= 0 {
			start := toks[first].pos
			// Trim only what the lexer skips as space: a Unicode space
			// such as U+0085 is a token of its own, not a blank piece.
			text := strings.Trim(sql[start:toks[last].end], " \t\n\r\f\v")
			pieces = append(pieces, Piece{Text: text, Offset: start})
		}
		first = -1
	}
	for i, t := range toks {
		if t.kind == tkOp {
			switch t.val {
			case "(":
				depth++
			case ")":
				depth = max(depth-1, 0)
			case ";":
				if depth == 0 {
					flush(i - 1)
					continue
				}
			}
		}
		if first < 0 {
			first = i
		}
	}
	flush(len(toks) - 1)
	return pieces
}
