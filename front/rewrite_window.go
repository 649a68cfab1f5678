package front

import (
	"fmt"
	"strings"

	"streamdb/sqlerr"
)

// WindowKind is the kind of a windowing table function.
type WindowKind string

// Window kinds.
const (
	Tumble WindowKind = "tumble"
	Hop    WindowKind = "hop"
)

// WindowTVF is a TUMBLE or HOP table function that stood in a FROM clause.
// The query names it by a generated table (Statement.Windows' key), aliased
// as Alias. Its rows are the source's columns plus window_start and
// window_end.
type WindowTVF struct {
	Kind       WindowKind
	Source     string // source relation (last part of a dotted name)
	Schema     string // schema of a dotted source name, or ""
	TimeColumn string
	Size       string // window size as interval text, e.g. "10 second"
	Slide      string // HOP only: the hop (slide) interval text
	Alias      string // the alias the query uses for the window's rows
}

// clauseWords are the keywords that start a clause of a query.
var clauseWords = setOf("select", "from", "where", "group", "having", "order",
	"limit", "offset", "on", "using", "set", "values", "returning", "window", "union",
	"intersect", "except", "into", "update", "delete", "insert")

// windowPass replaces TUMBLE(...) and HOP(...) in FROM clauses.
func (r *rewriter) windowPass() error {
	out := make([]token, 0, len(r.toks))
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if !(t.isWord("tumble", "hop") && i+1 < len(r.toks) && r.toks[i+1].isOp("(") && inFromList(r.toks, i)) {
			out = append(out, t)
			continue
		}
		end := matchParen(r.toks, i+1)
		if end < 0 {
			return syntaxError(r.src, eofToken(r.src))
		}
		w, err := r.readWindow(t, r.toks[i+2:end], r.toks[end])
		if err != nil {
			return err
		}
		if r.windows == nil {
			r.windows = map[string]*WindowTVF{}
		}
		name := fmt.Sprintf("%s%d", WindowTablePrefix, len(r.windows)+1)
		r.windows[name] = w
		out = append(out, synth(tkWord, name, t, t.space))
		i = end
		// Keep an alias that follows; otherwise alias the window as its source.
		next := token{kind: tkEOF}
		if i+1 < len(r.toks) {
			next = r.toks[i+1]
		}
		switch {
		case next.isWord("as") && i+2 < len(r.toks):
			w.Alias = r.toks[i+2].val
		case next.kind == tkIdent || next.kind == tkWord && !reserved[next.val] && !clauseWords[next.val] && !joinWords[next.val]:
			w.Alias = next.val
		default:
			w.Alias = w.Source
			out = append(out, synth(tkWord, "as", t, true), nameToken(w.Source, t, true))
		}
	}
	r.toks = out
	return nil
}

// inFromList reports whether toks[i] begins an item of a FROM list: it
// follows FROM, JOIN or a comma of a FROM list.
func inFromList(toks []token, i int) bool {
	if i == 0 {
		return false
	}
	prev := toks[i-1]
	switch {
	case prev.isWord("from", "join", "lateral"):
		return true
	case !prev.isOp(","):
		return false
	}
	// Walk back over the list, and over the ON / USING of its joins, to the
	// keyword that starts its clause.
	for j := i - 1; ; {
		clause, at := enclosingClause(toks, j)
		switch clause {
		case "from":
			return true
		case "on", "using":
			j = at
		default:
			return false
		}
	}
}

// readWindow reads the arguments of TUMBLE or HOP.
func (r *rewriter) readWindow(fn token, args []token, closing token) (*WindowTVF, error) {
	parts := splitTopLevel(args)
	w := &WindowTVF{Kind: Tumble}
	want := 3
	usage := "TUMBLE(source, time_column, size)"
	if fn.isWord("hop") {
		w.Kind, want, usage = Hop, 4, "HOP(source, time_column, slide, size)"
	}
	if len(args) == 0 || len(parts) != want {
		return nil, errorAt(r.src, fn, sqlerr.SyntaxError, "%s takes %d arguments: %s", strings.ToUpper(fn.val), want, usage)
	}
	for _, p := range parts {
		if len(p) == 0 {
			return nil, syntaxError(r.src, closing)
		}
	}
	src := parts[0]
	switch {
	case len(src) == 1 && src[0].isName():
		w.Source = src[0].val
	case len(src) == 3 && src[0].isName() && src[1].isOp(".") && src[2].isName():
		w.Schema, w.Source = src[0].val, src[2].val
	default:
		return nil, unsupported(r.src, src[0], "a window source other than a table, stream or view name")
	}
	col := parts[1]
	if len(col) != 1 || !col[0].isName() {
		return nil, errorAt(r.src, col[0], sqlerr.SyntaxError, "the time column of %s must be a column name", strings.ToUpper(fn.val))
	}
	w.TimeColumn = col[0].val
	var err error
	if w.Kind == Hop {
		if w.Slide, err = r.intervalArg(parts[2]); err != nil {
			return nil, err
		}
	}
	if w.Size, err = r.intervalArg(parts[want-1]); err != nil {
		return nil, err
	}
	return w, nil
}

// intervalArg reads a window interval: INTERVAL '10' SECOND,
// INTERVAL '1 hour', or a plain string '1 hour'.
func (r *rewriter) intervalArg(toks []token) (string, error) {
	i := 0
	if toks[0].isWord("interval") {
		i = 1
	}
	if i < len(toks) && toks[i].kind == tkString {
		text, next := intervalText(toks, i)
		if next == len(toks) {
			return text, nil
		}
	}
	return "", unsupported(r.src, toks[0], "a window interval that is not a literal").
		WithHint("Write it as INTERVAL '10' SECOND or INTERVAL '10 seconds'.")
}
