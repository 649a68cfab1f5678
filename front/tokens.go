package front

import "strings"

// Helpers that look at token slices.

func (t token) isOp(ops ...string) bool {
	if t.kind != tkOp {
		return false
	}
	for _, op := range ops {
		if t.val == op {
			return true
		}
	}
	return false
}

// isWord reports whether t is an unquoted word equal to one of words (which
// must be lower case).
func (t token) isWord(words ...string) bool {
	if t.kind != tkWord {
		return false
	}
	for _, w := range words {
		if t.val == w {
			return true
		}
	}
	return false
}

// isName reports whether t can be an identifier: a quoted identifier or an
// unquoted word that is not reserved.
func (t token) isName() bool {
	return t.kind == tkIdent || (t.kind == tkWord && !reserved[t.val])
}

// isOperand reports whether t is a token that is a whole primary by itself.
func (t token) isOperand() bool {
	switch t.kind {
	case tkIdent, tkString, tkBitString, tkNumber, tkParam:
		return true
	case tkWord:
		return !operatorWords[t.val] && !reserved[t.val] || t.isWord("null", "true", "false")
	}
	return false
}

// reserved holds words that cannot be bare identifiers (a subset of
// PostgreSQL's reserved key words, enough to tell a name from a clause).
var reserved = setOf("all", "and", "any", "array", "as", "asc", "both", "case",
	"cast", "check", "collate", "column", "constraint", "create", "cross",
	"default", "desc", "distinct", "do", "else", "end", "except", "false",
	"fetch", "for", "foreign", "from", "full", "grant", "group", "having", "in",
	"inner", "intersect", "into", "is", "join", "lateral", "leading", "left",
	"like", "ilike", "limit", "natural", "not", "null", "offset", "on", "only",
	"or", "order", "outer", "primary", "references", "returning", "right",
	"select", "some", "table", "then", "to", "trailing", "true", "union",
	"unique", "using", "when", "where", "window", "with")

// operatorWords are words that join operands inside an expression.
var operatorWords = setOf("and", "or", "not", "in", "like", "ilike", "between",
	"escape", "collate", "at", "similar", "is", "isnull", "notnull", "regexp", "rlike")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// matchParen returns the index of the ')' that closes the '(' at i, or -1.
func matchParen(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch {
		case toks[j].isOp("(", "["):
			depth++
		case toks[j].isOp(")", "]"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// matchParenBack returns the index of the '(' that the ')' at i closes, or -1.
func matchParenBack(toks []token, i int) int {
	depth := 0
	for j := i; j >= 0; j-- {
		switch {
		case toks[j].isOp(")", "]"):
			depth++
		case toks[j].isOp("(", "["):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// matchCase returns the index of the END that closes the CASE at i, or -1.
func matchCase(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch {
		case toks[j].isWord("case"):
			depth++
		case toks[j].isWord("end"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// matchCaseBack returns the index of the CASE that the END at i closes, or -1.
func matchCaseBack(toks []token, i int) int {
	depth := 0
	for j := i; j >= 0; j-- {
		switch {
		case toks[j].isWord("end"):
			depth++
		case toks[j].isWord("case"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// notFunctionNames are words that may stand before '(' without naming a
// function: '(' after them opens a group or a subquery.
var notFunctionNames = setOf("and", "or", "not", "in", "select", "where", "on",
	"as", "from", "join", "by", "having", "when", "then", "else", "case",
	"values", "any", "all", "some", "is", "like", "ilike", "between", "union",
	"intersect", "except", "returning", "set", "into", "using", "with",
	"limit", "offset", "distinct", "lateral", "over", "filter", "escape", "for", "placing")

// primaryStart returns the index where the primary expression that ends at
// toks[e] begins: a literal, a parameter, a (qualified) name, a parenthesised
// group, a function call (with its OVER clause), CASE ... END, or a
// subscripted primary. It returns -1 if toks[e] does not end a primary.
func primaryStart(toks []token, e int) int {
	if e < 0 || e >= len(toks) {
		return -1
	}
	t := toks[e]
	switch {
	case t.isOp(")"):
		s := matchParenBack(toks, e)
		if s < 0 {
			return -1
		}
		if s > 0 && toks[s-1].isWord("over", "filter") {
			if f := primaryStart(toks, s-2); f >= 0 {
				return f
			}
			return s
		}
		if s > 0 && (toks[s-1].kind == tkIdent || toks[s-1].kind == tkWord && !notFunctionNames[toks[s-1].val]) {
			return qualifiedStart(toks, s-1)
		}
		return s
	case t.isOp("]"):
		s := matchParenBack(toks, e)
		if s <= 0 {
			return -1
		}
		return primaryStart(toks, s-1)
	case t.isWord("end"):
		return matchCaseBack(toks, e)
	case t.isWord("at") && (e+1 >= len(toks) || !toks[e+1].isWord("time")):
		return qualifiedStart(toks, e) // a column named at, not AT TIME ZONE
	case t.kind == tkWord:
		if operatorWords[t.val] || notFunctionNames[t.val] {
			return -1
		}
		return qualifiedStart(toks, e)
	case t.kind == tkIdent:
		return qualifiedStart(toks, e)
	case t.kind == tkString, t.kind == tkBitString, t.kind == tkNumber, t.kind == tkParam:
		return e
	}
	return -1
}

// qualifiedStart extends the name at toks[e] back over "a.b." qualifiers.
func qualifiedStart(toks []token, e int) int {
	s := e
	for s >= 2 && toks[s-1].isOp(".") && (toks[s-2].kind == tkWord || toks[s-2].kind == tkIdent) {
		s -= 2
	}
	return s
}

// splitTopLevel splits toks at commas outside parentheses.
func splitTopLevel(toks []token) [][]token {
	var parts [][]token
	depth, start := 0, 0
	for i, t := range toks {
		switch {
		case t.isOp("(", "["):
			depth++
		case t.isOp(")", "]"):
			depth--
		case t.isOp(",") && depth == 0:
			parts = append(parts, toks[start:i])
			start = i + 1
		}
	}
	return append(parts, toks[start:])
}

// synth makes a token at the position of at, for text a rewrite inserts.
func synth(kind tokKind, val string, at token, space bool) token {
	return token{kind: kind, val: val, pos: at.pos, end: at.end, space: space}
}

// concat returns the concatenation of token slices as a new slice.
func concat(parts ...[]token) []token {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]token, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// withSpace returns toks with the space flag of its first token set.
func withSpace(toks []token, space bool) []token {
	if len(toks) == 0 {
		return toks
	}
	out := append([]token(nil), toks...)
	out[0].space = space
	return out
}

// quoteIdent renders name as an identifier the TiDB parser reads back
// unchanged: bare when it is a plain lower-case word, else double-quoted.
func quoteIdent(name string) string {
	plain := name != "" && !reserved[name]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && isDigit(c)) {
			plain = false
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// quoteString renders s as a standard SQL string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// nameToken makes an identifier token for name at the position of at.
func nameToken(name string, at token, space bool) token {
	if quoteIdent(name) == name {
		return synth(tkWord, name, at, space)
	}
	return synth(tkIdent, name, at, space)
}

// enclosingClause walks back from toks[i] at its parenthesis depth to the
// keyword that starts its clause (see clauseWords) and returns it with its
// index, or "" and -1.
func enclosingClause(toks []token, i int) (string, int) {
	for j := i - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case t.isOp(")"):
			if j = matchParenBack(toks, j); j < 0 {
				return "", -1
			}
		case t.isOp("("):
			return "", -1
		case t.kind == tkWord && clauseWords[t.val]:
			return t.val, j
		}
	}
	return "", -1
}

// clauseIs reports whether toks[i] is in a clause started by word.
func clauseIs(toks []token, i int, word string) bool {
	c, _ := enclosingClause(toks, i)
	return c == word
}
