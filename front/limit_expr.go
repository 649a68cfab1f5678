package front

import (
	"math"
	"sort"
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

// maxLimitParams is how many parameters one LIMIT or OFFSET expression
// may hold: its markers take the offsets of its placeholder's digits
// (fillLimitExprs), of which there are 19.
const maxLimitParams = 19

// cutLimitExprs returns toks with each LIMIT or OFFSET expression that is
// not a single number or parameter replaced by a placeholder, and the
// parsed expressions.
func cutLimitExprs(src string, toks []token) ([]token, []limitExpr, error) {
	var exprs []limitExpr
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
		sel := concat([]token{synth(tkWord, "select", value[0], false)}, withSpace(value, true))
		node, sub, err := parseTiDB(src, sel, tokenOrEOF(src, toks, end))
		if err != nil {
			return nil, nil, err
		}
		if len(sub.params) > maxLimitParams {
			return nil, nil, unsupported(src, value[0], "more than %d parameters in a %s expression", maxLimitParams, upper(t.val))
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
		exprs = append(exprs, limitExpr{e: s.Fields.Fields[0].Expr, params: sub.params})
		i = end - 1
	}
	if out == nil {
		return toks, nil, nil
	}
	return out, exprs, nil
}

// limitExpr is a LIMIT or OFFSET expression cut out of a statement, with
// the $n of its ? markers in text order.
type limitExpr struct {
	e      ast.ExprNode
	params []int
}

// fillLimitExprs replaces the placeholders of cutLimitExprs in stmt,
// whose rendering is r, and returns the $n of all the statement's ?
// markers in text order. The markers of an expression take the text
// offsets of its placeholder's first characters, so that sorting all
// markers by offset (as the binder numbers them) puts them in the order
// of the $n list.
func fillLimitExprs(stmt ast.Node, r rendered, exprs []limitExpr) []int {
	var params []int
	for i, t := range r.toks {
		if t.kind == tkParam {
			params = append(params, t.n)
			continue
		}
		k, ok := limitPlaceholder(t, len(exprs))
		if !ok {
			continue
		}
		params = append(params, exprs[k].params...)
		v := &markerCollector{}
		exprs[k].e.Accept(v)
		sort.Slice(v.markers, func(a, b int) bool { return v.markers[a].Offset < v.markers[b].Offset })
		for j, m := range v.markers {
			m.Offset = r.starts[i] + j
		}
	}
	list := make([]ast.ExprNode, len(exprs))
	for i, e := range exprs {
		list[i] = e.e
	}
	stmt.Accept(&limitFiller{exprs: list})
	return params
}

// limitPlaceholder returns the index of the expression whose placeholder
// t is, among n.
func limitPlaceholder(t token, n int) (int, bool) {
	if t.kind != tkNumber {
		return 0, false
	}
	u, err := strconv.ParseUint(t.val, 10, 64)
	if err != nil || u < limitSentinel || u-limitSentinel >= uint64(n) {
		return 0, false
	}
	return int(u - limitSentinel), true
}

type markerCollector struct {
	markers []*test_driver.ParamMarkerExpr
}

func (v *markerCollector) Enter(n ast.Node) (ast.Node, bool) {
	if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
		v.markers = append(v.markers, m)
	}
	return n, false
}
func (v *markerCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

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
