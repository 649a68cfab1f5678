package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// windowFinder collects the window function calls of an expression (not
// looking inside them: window calls do not nest).
type windowFinder struct{ calls []*ast.WindowFuncExpr }

func (v *windowFinder) Enter(n ast.Node) (ast.Node, bool) {
	if w, ok := n.(*ast.WindowFuncExpr); ok {
		v.calls = append(v.calls, w)
		return n, true
	}
	return n, false
}
func (v *windowFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func containsWindow(n ast.Node) bool {
	if n == nil {
		return false
	}
	v := &windowFinder{}
	n.Accept(v)
	return len(v.calls) > 0
}

// rankingItem is a select-list or ORDER BY expression that may hold
// window calls, and the output name of its column ("" for ORDER BY).
type rankingItem struct {
	node ast.ExprNode
	name string
}

// bindRankings binds the ranking window functions (row_number, rank,
// dense_rank) of the items: each call becomes a TopN over input that adds
// its rank as a hidden column, and b resolves the call to that column. It
// returns the new input and its scope. Partition and order expressions
// are bound over in, whose columns the TopNs keep at the same positions.
func (sb *selectBinder) bindRankings(b *binder, items []rankingItem, input plan.Node, in *scope, hasAgg bool) (plan.Node, *scope, error) {
	for _, item := range items {
		v := &windowFinder{}
		item.node.Accept(v)
		for _, w := range v.calls {
			if _, done := b.windows[w]; done {
				continue
			}
			if hasAgg {
				return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "window functions together with GROUP BY or aggregates are not supported yet").
					WithHint("Aggregate in a subquery and rank its rows in the outer query.")
			}
			t, err := sb.bindRanking(b, w, input, in)
			if err != nil {
				return nil, nil, err
			}
			t.RankName = t.Func
			if item.node == w && item.name != "" {
				t.RankName = item.name
			}
			col := t.RankCol()
			name := t.Cols[col].Name
			if b.windows == nil {
				b.windows = map[*ast.WindowFuncExpr]int{}
			}
			b.windows[w] = col
			input = t
			cols := append(append([]scopeColumn{}, in.cols...), scopeColumn{name: name, typ: types.Int8})
			in = &scope{cols: cols}
		}
	}
	return input, in, nil
}

func (sb *selectBinder) bindRanking(b *binder, w *ast.WindowFuncExpr, input plan.Node, in *scope) (*plan.TopN, error) {
	fn := strings.ToLower(w.Name)
	switch fn {
	case plan.RowNumber, plan.Rank, plan.DenseRank:
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "window function %s() is not supported; only row_number(), rank() and dense_rank() are", fn)
	}
	if len(w.Args) > 0 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s() takes no arguments", fn)
	}
	if w.Spec.Name.L != "" || w.Spec.Ref.L != "" {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "named windows (OVER w) are not supported; write the window in OVER (...)")
	}
	t := &plan.TopN{Input: input, Func: fn, Count: -1}
	if p := w.Spec.PartitionBy; p != nil {
		for _, item := range p.Items {
			e, err := b.bindExpr(item.Expr, in)
			if err != nil {
				return nil, err
			}
			t.PartitionBy = append(t.PartitionBy, e)
		}
	}
	if o := w.Spec.OrderBy; o != nil {
		for _, item := range o.Items {
			e, err := b.bindExpr(item.Expr, in)
			if err != nil {
				return nil, err
			}
			t.Order = append(t.Order, plan.SortKey{Expr: e, Desc: item.Desc})
		}
	}
	cols := input.Schema()
	// The hidden column shows in EXPLAIN as the call; a user cannot name
	// it without quotes.
	name := fn + "()"
	for _, c := range cols {
		if c.Name == name {
			name = fmt.Sprintf("%s()#%d", fn, len(cols))
			break
		}
	}
	t.Cols = append(append([]types.Column{}, cols...), types.Column{Name: name, Type: types.Int8})
	return t, nil
}

// bindWindowRef resolves a window call bound by bindRankings to its
// column of s.
func (b *binder) bindWindowRef(w *ast.WindowFuncExpr, s *scope) (expr.Expr, error) {
	i, ok := b.windows[w]
	if !ok || i >= len(s.cols) {
		return nil, sqlerr.New(sqlerr.WindowingError, "window functions are not allowed here")
	}
	return &expr.ColRef{Idx: i, Name: s.cols[i].name, T: types.Int8}, nil
}
