package front

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the AST

	"streamdb/sqlerr"
)

// parsers pools TiDB parsers, which are not safe for concurrent use.
var parsers = sync.Pool{New: func() any {
	p := parser.New()
	p.SetSQLMode(mysql.ModeANSIQuotes | mysql.ModePipesAsConcat | mysql.ModeNoBackslashEscapes)
	return p
}}

// parseTiDB renders toks and parses them with the TiDB parser as one
// statement. Errors point into src through the tokens' positions; an error
// at the end of toks points at follow, the token after them in src.
func parseTiDB(src string, toks []token, follow token) (ast.StmtNode, rendered, error) {
	toks, limits, err := cutLimitExprs(src, toks)
	if err != nil {
		return nil, rendered{}, err
	}
	toks, derived, err := cutDerivedColumns(src, toks)
	if err != nil {
		return nil, rendered{}, err
	}
	r := render(toks)
	p := parsers.Get().(*parser.Parser)
	defer parsers.Put(p) // the parser reuses its result slice: read it first
	stmts, _, err := p.Parse(r.text, "", "")
	if err != nil {
		return nil, r, translateError(src, r, err, follow)
	}
	if len(stmts) != 1 {
		return nil, r, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	stmt := stmts[0]
	if limits != nil {
		r.params = fillLimitExprs(stmt, r, limits)
	}
	if derived != nil {
		fillDerivedColumns(stmt, derived)
	}
	return stmt, r, nil
}

var (
	nearRE   = regexp.MustCompile(`(?s) near "(.*)$`)
	lengthRE = regexp.MustCompile(`\(total length (\d+)\)`)
)

// translateError turns a TiDB parser error into a PostgreSQL-style syntax
// error at the original token. TiDB reports the rest of the text from the
// token it stopped at ("near ..."), which locates it in the rendered text.
func translateError(src string, r rendered, err error, follow token) error {
	msg := err.Error()
	m := nearRE.FindStringSubmatch(msg)
	if m == nil {
		text := msg
		if i := strings.Index(text, "]"); strings.HasPrefix(text, "[") && i > 0 {
			text = text[i+1:]
		}
		return sqlerr.New(sqlerr.SyntaxError, "%s", text)
	}
	off := -1
	if lm := lengthRE.FindStringSubmatch(msg); lm != nil {
		if n, convErr := strconv.Atoi(lm[1]); convErr == nil {
			off = len(r.text) - n
		}
	}
	if off < 0 {
		rest := m[1]
		for k := 0; k <= len(r.text); k++ {
			if strings.HasPrefix(rest, r.text[k:]+`"`) {
				off = k
				break
			}
		}
	}
	if off < 0 {
		off = len(r.text)
	}
	i := r.tokenAt(off)
	if i >= len(r.toks) {
		return syntaxError(src, follow)
	}
	if what := unsupportedAt(r.toks, i); what != "" {
		return unsupported(src, r.toks[i], "%s", what)
	}
	return syntaxError(src, r.toks[i])
}

// unsupportedAt names the PostgreSQL construct that starts at toks[i] when
// the TiDB parser stopped there because streamdb does not offer it.
func unsupportedAt(toks []token, i int) string {
	t := toks[i]
	prev := token{}
	if i > 0 {
		prev = toks[i-1]
	}
	switch {
	case t.isWord("returning"):
		return "RETURNING"
	case t.isWord("conflict") && prev.isWord("on"):
		return "ON CONFLICT"
	case t.isWord("similar"):
		return "SIMILAR TO"
	case t.isWord("array") || t.isOp("["):
		return "ARRAY"
	case i >= 2 && prev.isOp("(") && toks[i-2].isWord("any", "some", "all") && !t.isWord("select", "with", "values"):
		return upper(toks[i-2].val) + " over an array"
	case t.isWord("any", "some", "all") && i+1 < len(toks) && toks[i+1].isOp("(") && !(i+2 < len(toks) && toks[i+2].isWord("select", "with", "values")):
		return upper(t.val) + " over an array"
	}
	return ""
}
