package binder

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// Window functions of a query with GROUP BY or aggregates run over the
// grouped rows, as in PostgreSQL: their arguments, PARTITION BY and ORDER
// BY are expressions of group keys and aggregates, and their nodes stack
// on the Aggregate (after HAVING), each adding its value as a column.
//
// The Aggregate's width is known only once every aggregate call of the
// query is bound, which happens while the select list is bound, after the
// windows. So a grouped window's value is bound as a column reference at
// groupedWindowBase+k (k: the window's rank in groupedWindows.nodes), and
// placeWindows moves those references behind the Aggregate's columns.
const groupedWindowBase = 1 << 30

// groupedWindows are the window calls of a grouped query, bound over the
// Aggregate's output but not yet stacked on it.
type groupedWindows struct {
	nodes []plan.Node // *plan.TopN or *plan.WindowFunc; Input not set
	fns   []string    // each node's function, naming its column
}

// bindGroupedWindows binds the window calls of items over the groups of
// b.agg (whose group keys are bound): b then resolves each call to a
// placeholder reference, until placeWindows.
func (sb *selectBinder) bindGroupedWindows(b *binder, items []rankingItem, specs []ast.WindowSpec) (*groupedWindows, error) {
	gw := &groupedWindows{}
	for _, item := range items {
		v := &windowFinder{}
		item.node.Accept(v)
		for _, w := range v.calls {
			if _, done := b.windows[w]; done {
				continue
			}
			spec, err := resolveWindowSpec(&w.Spec, specs)
			if err != nil {
				return nil, err
			}
			node, col, typ, err := sb.bindWindowCall(b, w, spec, item, &plan.Values{}, b.agg.input)
			if err != nil {
				return nil, err
			}
			if b.windows == nil {
				b.windows = map[*ast.WindowFuncExpr]int{}
			}
			b.windows[w] = groupedWindowBase + len(gw.nodes)
			b.groupedWindowCols = append(b.groupedWindowCols, types.Column{Name: node.Schema()[col].Name, Type: typ})
			gw.nodes = append(gw.nodes, node)
			gw.fns = append(gw.fns, strings.ToLower(w.Name))
		}
	}
	return gw, nil
}

// stack puts the window nodes on input, the grouped rows, in order.
func (gw *groupedWindows) stack(input plan.Node) plan.Node {
	for i, n := range gw.nodes {
		cols := input.Schema()
		switch n := n.(type) {
		case *plan.TopN:
			last := n.Cols[len(n.Cols)-1]
			last.Name = hiddenWindowColumn(gw.fns[i], input)
			n.Input, n.Cols = input, append(append([]types.Column{}, cols...), last)
		case *plan.WindowFunc:
			last := n.Cols[len(n.Cols)-1]
			last.Name = hiddenWindowColumn(gw.fns[i], input)
			n.Input, n.Cols = input, append(append([]types.Column{}, cols...), last)
		}
		input = n
	}
	return input
}

// placeWindows returns e with the placeholder references of grouped
// windows moved to their columns, which follow the grouped rows' width
// columns.
func placeWindows(e expr.Expr, width int) expr.Expr {
	return substitute(e, func(x expr.Expr) (expr.Expr, bool) {
		if c, ok := x.(*expr.ColRef); ok && c.Idx >= groupedWindowBase {
			s := *c
			s.Idx = width + c.Idx - groupedWindowBase
			return &s, true
		}
		return nil, false
	})
}
