package front

import (
	"math"
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// The TiDB parser takes only a number or a ? as a LIMIT or OFFSET value;
// PostgreSQL takes any expression without column references (LIMIT NULL,
// LIMIT 3 * 4, LIMIT (SELECT ...)). cutLimitExprs parses each such
// expression on its own and stands a placeholder number in its place,
// which no user can write there (limitPass refuses numbers past bigint):
// limitSentinel plus the expression's index. fillLimitExprs puts the
// expressions back into the parsed statement's ast.Limit nodes, so the
// binder sees them as the LIMIT's Count and Offset.
const limitSentinel = uint64(math.MaxInt64) + 1

// cutLimitExprs returns toks with each LIMIT or OFFSET expression that is
// not a single number or parameter replaced by a placeholder, and the
// parsed expressions.
func cutLimitExprs(src string, toks []token) ([]token, []ast.ExprNode, error) {
	var exprs []ast.ExprNode
	var out []token
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.isWord("limit", "offset") {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		end := limitValueEnd(toks, i+1)
		if end == i+1 || end == i+2 && (isInteger(toks[i+1]) || toks[i+1].kind == tkParam) {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		value := toks[i+1 : end]
		for _, v := range value {
			if v.kind == tkParam {
				return nil, nil, unsupported(src, v, "a parameter inside a %s expression", upper(t.val)).
					WithHint("Pass the whole count as the parameter.")
			}
		}
		sel := concat([]token{synth(tkWord, "select", value[0], false)}, withSpace(value, true))
		node, _, err := parseTiDB(src, sel, tokenOrEOF(src, toks, end))
		if err != nil {
			return nil, nil, err
		}
		s, ok := node.(*ast.SelectStmt)
		if !ok || s.From != nil || s.Fields == nil || len(s.Fields.Fields) != 1 || s.Fields.Fields[0].Expr == nil ||
			s.Fields.Fields[0].AsName.O != "" || s.Where != nil || s.OrderBy != nil || s.Limit != nil {
			return nil, nil, syntaxError(src, value[0])
		}
		if out == nil {
			out = append([]token(nil), toks[:i]...)
		}
		out = append(out, t, synth(tkNumber, strconv.FormatUint(limitSentinel+uint64(len(exprs)), 10), value[0], true))
		exprs = append(exprs, s.Fields.Fields[0].Expr)
		i = end - 1
	}
	if out == nil {
		return toks, nil, nil
	}
	return out, exprs, nil
}

// fillLimitExprs replaces the placeholders of cutLimitExprs in stmt.
func fillLimitExprs(stmt ast.Node, exprs []ast.ExprNode) {
	stmt.Accept(&limitFiller{exprs: exprs})
}

type limitFiller struct{ exprs []ast.ExprNode }

func (v *limitFiller) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (v *limitFiller) Leave(n ast.Node) (ast.Node, bool) {
	if l, ok := n.(*ast.Limit); ok {
		l.Count = v.fill(l.Count)
		l.Offset = v.fill(l.Offset)
	}
	return n, true
}

func (v *limitFiller) fill(e ast.ExprNode) ast.ExprNode {
	c, ok := e.(*test_driver.ValueExpr)
	if !ok || c.Kind() != test_driver.KindUint64 {
		return e
	}
	k := c.GetUint64()
	if k < limitSentinel || k-limitSentinel >= uint64(len(v.exprs)) {
		return e
	}
	return v.exprs[k-limitSentinel]
}

// isInteger reports whether t is an integer literal.
func isInteger(t token) bool {
	if t.kind != tkNumber || t.val == "" {
		return false
	}
	for _, c := range t.val {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
