package plan

import (
	"streamdb/expr"
	"streamdb/types"
)

// PruneColumns returns a plan with root's output whose rows carry only
// the columns something reads: a projection keeps only the expressions
// read above it, and each input of a join is narrowed to the columns read
// above the join, by its keys or by its condition. A join otherwise copies
// every column of both inputs into each output row and keeps them in its
// state, though an aggregate above it may read three of seventeen.
//
// The result is a new tree of new nodes over root's leaves (root is not
// modified). Scans keep their width (a stream reader decodes only the
// columns read anyway); so do unions, sorts, limits and top-N, whose
// inputs are pruned only inside.
func PruneColumns(root Node) Node {
	return (&pruner{}).all(root)
}

// JoinNarrowing is where PruneColumns moved the columns of a join's two
// inputs: for each side, the position of each old input column in the
// narrowed input row, -1 for a dropped one. A join keeps its input rows in
// its state, so this is what maps a join's old state to the new.
type JoinNarrowing [2][]int

// PruneColumnsNarrowing is PruneColumns that also returns how the inputs
// of each join of root were narrowed, by the join's node in root.
func PruneColumnsNarrowing(root Node) (Node, map[*Join]JoinNarrowing) {
	pr := &pruner{joins: map[*Join]JoinNarrowing{}}
	return pr.all(root), pr.joins
}

// pruner is one run of PruneColumns; joins, when not nil, records the
// narrowing of each join it rewrites.
type pruner struct {
	joins map[*Join]JoinNarrowing
}

// all prunes n for a parent that reads every column of it.
func (pr *pruner) all(n Node) Node {
	out, _ := pr.prune(n, AllColumns(len(n.Schema())))
	return out
}

// prune rewrites n for a parent that reads the columns marked in need. It
// returns the new node and where each old output column went (-1 for a
// dropped one, which need never marks).
func (pr *pruner) prune(n Node, need []bool) (Node, []int) {
	switch n := n.(type) {
	case *Filter:
		child, m := pr.prune(n.Input, InputsRead(n, need)[0])
		return &Filter{Input: child, Cond: remapCols(n.Cond, m)}, m
	case *Project:
		child, m := pr.prune(n.Input, InputsRead(n, need)[0])
		out := &Project{Input: child}
		pos := make([]int, len(n.Exprs))
		for j, e := range n.Exprs {
			pos[j] = -1
			if need[j] {
				pos[j] = len(out.Exprs)
				out.Exprs = append(out.Exprs, remapCols(e, m))
				out.Cols = append(out.Cols, n.Cols[j])
			}
		}
		return out, pos
	case *Window:
		width := len(n.Input.Schema())
		child, m := pr.prune(n.Input, InputsRead(n, need)[0])
		cw := len(child.Schema())
		cols := append(append([]types.Column(nil), child.Schema()...), n.Cols[width:]...)
		pos := append(append([]int(nil), m...), cw, cw+1)
		return &Window{Input: child, TimeCol: m[n.TimeCol], Size: n.Size, Slide: n.Slide, Cols: cols}, pos
	case *Aggregate:
		child, m := pr.prune(n.Input, InputsRead(n, need)[0])
		out := &Aggregate{Input: child, Cols: n.Cols, Aggs: make([]AggCall, len(n.Aggs)), UID: n.UID}
		for _, g := range n.GroupBy {
			out.GroupBy = append(out.GroupBy, remapCols(g, m))
		}
		for i, a := range n.Aggs {
			out.Aggs[i] = a
			if a.Arg != nil {
				out.Aggs[i].Arg = remapCols(a.Arg, m)
			}
		}
		return out, identity(len(n.Cols))
	case *Join:
		return pr.pruneJoin(n, need)
	case *Union:
		out := &Union{Cols: n.Cols}
		for _, in := range n.Inputs {
			out.Inputs = append(out.Inputs, pr.all(in))
		}
		return out, identity(len(n.Cols))
	case *TopN:
		c := *n
		c.Input = pr.all(n.Input)
		return &c, identity(len(n.Cols))
	case *Sort:
		c := *n
		c.Input = pr.all(n.Input)
		return &c, identity(len(n.Schema()))
	case *Limit:
		c := *n
		c.Input = pr.all(n.Input)
		return &c, identity(len(n.Schema()))
	}
	// Scans, values and anything new: unchanged.
	return n, identity(len(n.Schema()))
}

// pruneJoin narrows each input of j to the columns read above j, by its
// keys or by its condition.
func (pr *pruner) pruneJoin(j *Join, need []bool) (Node, []int) {
	left, right := joinInputsRead(j, need)
	l, ml := pr.narrowed(j.Left, left)
	r, mr := pr.narrowed(j.Right, right)
	if pr.joins != nil {
		pr.joins[j] = JoinNarrowing{ml, mr}
	}
	out := &Join{Kind: j.Kind, Left: l, Right: r, Note: j.Note}
	for _, k := range j.LeftKeys {
		out.LeftKeys = append(out.LeftKeys, remapCols(k, ml))
	}
	for _, k := range j.RightKeys {
		out.RightKeys = append(out.RightKeys, remapCols(k, mr))
	}
	lw := len(l.Schema())
	pos := append([]int(nil), ml...)
	for _, p := range mr {
		if p >= 0 {
			p += lw
		}
		pos = append(pos, p)
	}
	if j.Cond != nil {
		out.Cond = remapCols(j.Cond, pos)
	}
	for i, p := range pos {
		if p >= 0 {
			out.Cols = append(out.Cols, j.Cols[i])
		}
	}
	return out, pos
}

// narrowed prunes n for need and, if the result still carries columns
// need does not mark (a scan keeps its width), puts a projection of just
// the needed ones on top.
func (pr *pruner) narrowed(n Node, need []bool) (Node, []int) {
	child, m := pr.prune(n, need)
	cols := child.Schema()
	extra := len(cols)
	for i, p := range m {
		if need[i] && p >= 0 {
			extra--
		}
	}
	if extra == 0 {
		return child, m
	}
	p := &Project{Input: child}
	pos := make([]int, len(m))
	for i, from := range m {
		pos[i] = -1
		if need[i] {
			pos[i] = len(p.Exprs)
			p.Exprs = append(p.Exprs, &expr.ColRef{Idx: from, Name: cols[from].Name, T: cols[from].Type})
			p.Cols = append(p.Cols, cols[from])
		}
	}
	return p, pos
}

// remapCols returns e with each column reference moved by m (old index to
// new). e itself is not modified: plans may share expressions.
func remapCols(e expr.Expr, m []int) expr.Expr {
	return expr.Walk(expr.Clone(e), func(x expr.Expr) expr.Expr {
		if c, ok := x.(*expr.ColRef); ok && c.Idx >= 0 && c.Idx < len(m) && m[c.Idx] != c.Idx {
			n := *c
			n.Idx = m[c.Idx]
			return &n
		}
		return x
	})
}

func identity(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}
