package binder

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

// Enter does not descend into subqueries: their window calls are theirs,
// bound with them, and walking each nested level's whole subtree would
// make binding quadratic in the nesting depth.
func (v *windowFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.WindowFuncExpr:
		v.calls = append(v.calls, n)
		return n, true
	case *ast.SubqueryExpr:
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

// bindRankings binds the window functions of the items. The ranking
// functions (row_number, rank, dense_rank) without a frame become a TopN
// over input that adds the rank as a hidden column, which views run too;
// the others become a plan.WindowFunc adding its value as a hidden column
// (ad-hoc queries only). b resolves each call to its column. It returns
// the new input and its scope. Partition and order expressions are bound
// over in, whose columns the nodes keep at the same positions. specs are
// the query's named windows (WINDOW w AS (...)).
func (sb *selectBinder) bindRankings(b *binder, items []rankingItem, specs []ast.WindowSpec, input plan.Node, in *scope) (plan.Node, *scope, error) {
	for _, item := range items {
		v := &windowFinder{}
		item.node.Accept(v)
		for _, w := range v.calls {
			if _, done := b.windows[w]; done {
				continue
			}
			spec, err := resolveWindowSpec(&w.Spec, specs)
			if err != nil {
				return nil, nil, err
			}
			node, col, typ, err := sb.bindWindowCall(b, w, spec, item, input, in)
			if err != nil {
				return nil, nil, err
			}
			name := node.Schema()[col].Name
			if b.windows == nil {
				b.windows = map[*ast.WindowFuncExpr]int{}
			}
			b.windows[w] = col
			input = node
			cols := append(append([]scopeColumn{}, in.cols...), scopeColumn{name: name, typ: typ})
			in = &scope{cols: cols}
		}
	}
	return input, in, nil
}

// bindWindowCall binds the window call w of item over input: a TopN
// for a frameless ranking function, else a WindowFunc. Its value is the
// node's column col, of type typ.
func (sb *selectBinder) bindWindowCall(b *binder, w *ast.WindowFuncExpr, spec *ast.WindowSpec, item rankingItem, input plan.Node, in *scope) (plan.Node, int, types.Type, error) {
	fn := strings.ToLower(w.Name)
	if (fn == plan.RowNumber || fn == plan.Rank || fn == plan.DenseRank) && spec.Frame == nil {
		t, err := sb.bindRanking(b, w, spec, input, in)
		if err != nil {
			return nil, 0, types.Unknown, err
		}
		t.RankName = t.Func
		if item.node == w && item.name != "" {
			t.RankName = item.name
		}
		return t, t.RankCol(), types.Int8, nil
	}
	wf, err := sb.bindWindowFunc(b, w, spec, input, in)
	if err != nil {
		return nil, 0, types.Unknown, err
	}
	return wf, len(wf.Cols) - 1, wf.Cols[len(wf.Cols)-1].Type, nil
}

// resolveWindowSpec returns the window a call's OVER names: its own
// (...), or a named window of the query (OVER w), which OVER (w ORDER BY
// ...) extends.
func resolveWindowSpec(spec *ast.WindowSpec, specs []ast.WindowSpec) (*ast.WindowSpec, error) {
	name := spec.Ref.L
	if spec.OnlyAlias || (name == "" && spec.Name.L != "") {
		name = spec.Name.L
	}
	return extendWindow(spec, name, specs, len(specs))
}

// extendWindow resolves spec over the named window name ("" for none);
// depth bounds the chain of references, so a cycle is an error.
func extendWindow(spec *ast.WindowSpec, name string, specs []ast.WindowSpec, depth int) (*ast.WindowSpec, error) {
	if name == "" {
		return spec, nil
	}
	if depth < 0 {
		return nil, sqlerr.New(sqlerr.WindowingError, "window \"%s\" refers to itself", name)
	}
	for i := range specs {
		if specs[i].Name.L != name {
			continue
		}
		// A definition WINDOW w AS (v ...) extends v.
		base, err := extendWindow(&specs[i], specs[i].Ref.L, specs, depth-1)
		if err != nil {
			return nil, err
		}
		if spec.OnlyAlias || spec.Ref.L == "" {
			return base, nil
		}
		out := *base
		if spec.PartitionBy != nil {
			return nil, sqlerr.New(sqlerr.WindowingError, "cannot override PARTITION BY clause of window \"%s\"", name)
		}
		if spec.OrderBy != nil {
			if base.OrderBy != nil {
				return nil, sqlerr.New(sqlerr.WindowingError, "cannot override ORDER BY clause of window \"%s\"", name)
			}
			out.OrderBy = spec.OrderBy
		}
		if base.Frame != nil {
			return nil, sqlerr.New(sqlerr.WindowingError, "cannot copy window \"%s\" because it has a frame clause", name)
		}
		out.Frame = spec.Frame
		return &out, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedObject, "window \"%s\" does not exist", name)
}

func (sb *selectBinder) bindRanking(b *binder, w *ast.WindowFuncExpr, spec *ast.WindowSpec, input plan.Node, in *scope) (*plan.TopN, error) {
	fn := strings.ToLower(w.Name)
	if len(w.Args) > 0 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s() takes no arguments", fn)
	}
	t := &plan.TopN{Input: input, Func: fn, Count: -1}
	var err error
	if t.PartitionBy, err = bindWindowPartition(b, spec, in); err != nil {
		return nil, err
	}
	if t.Order, err = bindWindowOrder(b, spec, in); err != nil {
		return nil, err
	}
	t.Cols = append(append([]types.Column{}, input.Schema()...), types.Column{Name: hiddenWindowColumn(fn, input), Type: types.Int8})
	return t, nil
}

// hiddenWindowColumn names the column a window call adds: it shows in
// EXPLAIN as the call; a user cannot name it without quotes.
func hiddenWindowColumn(fn string, input plan.Node) string {
	cols := input.Schema()
	name := fn + "()"
	for _, c := range cols {
		if c.Name == name {
			return fmt.Sprintf("%s()#%d", fn, len(cols))
		}
	}
	return name
}

func bindWindowPartition(b *binder, spec *ast.WindowSpec, in *scope) ([]expr.Expr, error) {
	var out []expr.Expr
	if p := spec.PartitionBy; p != nil {
		for _, item := range p.Items {
			e, err := b.bindExpr(item.Expr, in)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func bindWindowOrder(b *binder, spec *ast.WindowSpec, in *scope) ([]plan.SortKey, error) {
	var order []plan.SortKey
	if o := spec.OrderBy; o != nil {
		for _, item := range o.Items {
			e, err := b.bindExpr(item.Expr, in)
			if err != nil {
				return nil, err
			}
			order = append(order, plan.SortKey{Expr: e, Desc: item.Desc})
		}
	}
	return order, nil
}

// bindWindowRef resolves a window call bound by bindRankings to its
// column of s.
func (b *binder) bindWindowRef(w *ast.WindowFuncExpr, s *scope) (expr.Expr, error) {
	i, ok := b.windows[w]
	if ok && i >= groupedWindowBase && i-groupedWindowBase < len(b.groupedWindowCols) {
		c := b.groupedWindowCols[i-groupedWindowBase]
		return &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}, nil
	}
	if !ok || i >= len(s.cols) {
		return nil, sqlerr.New(sqlerr.WindowingError, "window functions are not allowed here")
	}
	return &expr.ColRef{Idx: i, Name: s.cols[i].name, T: s.cols[i].typ}, nil
}
