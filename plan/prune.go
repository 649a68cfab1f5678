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
	n, _ := prune(root, AllColumns(len(root.Schema())))
	return n
}

// prune rewrites n for a parent that reads the columns marked in need. It
// returns the new node and where each old output column went (-1 for a
// dropped one, which need never marks).
func prune(n Node, need []bool) (Node, []int) {
	switch n := n.(type) {
	case *Filter:
		in := ResizeColumns(need, len(n.Input.Schema()))
		MarkRefs(in, n.Cond)
		child, m := prune(n.Input, in)
		return &Filter{Input: child, Cond: remapCols(n.Cond, m)}, m
	case *Project:
		in := make([]bool, len(n.Input.Schema()))
		for j, e := range n.Exprs {
			if need[j] {
				MarkRefs(in, e)
			}
		}
		child, m := prune(n.Input, in)
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
		in := ResizeColumns(need, width)
		in[n.TimeCol] = true
		child, m := prune(n.Input, in)
		cw := len(child.Schema())
		cols := append(append([]types.Column(nil), child.Schema()...), n.Cols[width:]...)
		pos := append(append([]int(nil), m...), cw, cw+1)
		return &Window{Input: child, TimeCol: m[n.TimeCol], Size: n.Size, Slide: n.Slide, Cols: cols}, pos
	case *Aggregate:
		in := make([]bool, len(n.Input.Schema()))
		for _, g := range n.GroupBy {
			MarkRefs(in, g)
		}
		for _, a := range n.Aggs {
			if a.Arg != nil {
				MarkRefs(in, a.Arg)
			}
		}
		child, m := prune(n.Input, in)
		out := &Aggregate{Input: child, Cols: n.Cols, Aggs: make([]AggCall, len(n.Aggs))}
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
		return pruneJoin(n, need)
	case *Union:
		out := &Union{Cols: n.Cols}
		for _, in := range n.Inputs {
			out.Inputs = append(out.Inputs, PruneColumns(in))
		}
		return out, identity(len(n.Cols))
	case *TopN:
		c := *n
		c.Input = PruneColumns(n.Input)
		return &c, identity(len(n.Cols))
	case *Sort:
		c := *n
		c.Input = PruneColumns(n.Input)
		return &c, identity(len(n.Schema()))
	case *Limit:
		c := *n
		c.Input = PruneColumns(n.Input)
		return &c, identity(len(n.Schema()))
	}
	// Scans, values and anything new: unchanged.
	return n, identity(len(n.Schema()))
}

// pruneJoin narrows each input of j to the columns read above j, by its
// keys or by its condition.
func pruneJoin(j *Join, need []bool) (Node, []int) {
	left, right := JoinInputsRead(j, need)
	l, ml := narrowed(j.Left, left)
	r, mr := narrowed(j.Right, right)
	out := &Join{Kind: j.Kind, Left: l, Right: r}
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

// JoinInputsRead returns the columns of j's left and right inputs that are
// read: by j's parent, which reads the output columns need marks, or by
// j's keys and condition.
func JoinInputsRead(j *Join, need []bool) (left, right []bool) {
	nl := len(j.Left.Schema())
	left = ResizeColumns(need, nl)
	right = make([]bool, len(j.Right.Schema()))
	if len(need) > nl {
		copy(right, need[nl:])
	}
	for _, k := range j.LeftKeys {
		MarkRefs(left, k)
	}
	for _, k := range j.RightKeys {
		MarkRefs(right, k)
	}
	if j.Cond != nil {
		both := make([]bool, nl+len(right))
		MarkRefs(both, j.Cond)
		OrColumns(left, both[:nl])
		OrColumns(right, both[nl:])
	}
	return left, right
}

// narrowed prunes n for need and, if the result still carries columns
// need does not mark (a scan keeps its width), puts a projection of just
// the needed ones on top.
func narrowed(n Node, need []bool) (Node, []int) {
	child, m := prune(n, need)
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

// MarkRefs marks the columns e reads. A reference past cols (which a
// bound plan never has) marks nothing rather than panic here; evaluation
// reports it. It only reads e (expr.Walk would store into shared plans).
func MarkRefs(cols []bool, e expr.Expr) {
	switch x := e.(type) {
	case *expr.ColRef:
		if x.Idx >= 0 && x.Idx < len(cols) {
			cols[x.Idx] = true
		}
	case *expr.Func:
		for _, a := range x.Args {
			MarkRefs(cols, a)
		}
	}
}

func identity(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// AllColumns returns a column set of n columns, all marked.
func AllColumns(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

// ResizeColumns returns a copy of the column set need cut or padded (with
// unmarked columns) to n columns.
func ResizeColumns(need []bool, n int) []bool {
	out := make([]bool, n)
	copy(out, need)
	return out
}

// OrColumns marks in dst every column src marks.
func OrColumns(dst, src []bool) {
	for i := range dst {
		if i < len(src) && src[i] {
			dst[i] = true
		}
	}
}
