package front

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// parseExplain reads EXPLAIN [ANALYZE] [VERBOSE] stmt and
// EXPLAIN (option [value], ...) stmt.
func parseExplain(c *cursor) (any, error) {
	c.next() // EXPLAIN
	e := &Explain{}
	if c.peek().isOp("(") && !c.peekAt(1).isWord("select", "with", "values", "table") && !c.peekAt(1).isOp("(") {
		c.next()
		e.Options = map[string]string{}
		for {
			key, err := c.name()
			if err != nil {
				return nil, err
			}
			value := "true"
			if !c.peek().isOp(",", ")") {
				if value, err = optionValue(c); err != nil {
					return nil, err
				}
			}
			e.Options[key] = strings.ToLower(value)
			if c.op(")") {
				break
			}
			if err := c.expectOp(","); err != nil {
				return nil, err
			}
		}
		e.Analyze = isTrue(e.Options["analyze"])
		e.Verbose = isTrue(e.Options["verbose"])
	} else {
		e.Analyze = c.word("analyze", "analyse")
		e.Verbose = c.word("verbose")
	}
	inner := c.toks[c.i:]
	if len(inner) == 0 {
		return nil, c.fail()
	}
	st, err := parseTokens(c.src, inner)
	if err != nil {
		return nil, err
	}
	switch st.Node.(type) {
	case ast.StmtNode, *CreateMaterializedView, *CreateView:
	default:
		return nil, unsupported(c.src, inner[0], "EXPLAIN %s", upper(inner[0].val))
	}
	e.Stmt = st
	c.i = len(c.toks)
	return e, nil
}

func isTrue(v string) bool {
	switch v {
	case "true", "on", "1", "yes":
		return true
	}
	return false
}
