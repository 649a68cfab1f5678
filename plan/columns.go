package plan

import "streamdb/expr"

// Column sets: a []bool per node output, true for the columns something
// reads. PruneColumns and exec's decoding of only the read columns both
// walk plans with them.

// InputsRead returns, for a node n whose output columns need marks are
// read, the columns of each of its inputs (in Children order) that are
// read: by n's parent through n, or by n itself.
func InputsRead(n Node, need []bool) [][]bool {
	switch n := n.(type) {
	case *Filter:
		in := ResizeColumns(need, len(n.Input.Schema()))
		MarkRefs(in, n.Cond)
		return [][]bool{in}
	case *Project:
		in := make([]bool, len(n.Input.Schema()))
		for j, e := range n.Exprs {
			if j < len(need) && need[j] {
				MarkRefs(in, e)
			}
		}
		return [][]bool{in}
	case *Window:
		in := ResizeColumns(need, len(n.Input.Schema()))
		in[n.TimeCol] = true
		return [][]bool{in}
	case *Union:
		var ins [][]bool
		for _, c := range n.Inputs {
			ins = append(ins, ResizeColumns(need, len(c.Schema())))
		}
		return ins
	case *Join:
		left, right := joinInputsRead(n, need)
		return [][]bool{left, right}
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
		return [][]bool{in}
	case *TopN:
		in := ResizeColumns(need, len(n.Input.Schema()))
		for _, p := range n.PartitionBy {
			MarkRefs(in, p)
		}
		for _, k := range n.Order {
			MarkRefs(in, k.Expr)
		}
		return [][]bool{in}
	case *Sort:
		in := ResizeColumns(need, len(n.Input.Schema()))
		for _, k := range n.Keys {
			MarkRefs(in, k.Expr)
		}
		return [][]bool{in}
	case *Limit:
		return [][]bool{ResizeColumns(need, len(n.Input.Schema()))}
	}
	// A node this analysis does not know reads everything.
	var ins [][]bool
	for _, c := range n.Children() {
		ins = append(ins, AllColumns(len(c.Schema())))
	}
	return ins
}

// joinInputsRead returns the columns of j's left and right inputs that are
// read: by j's parent, which reads the output columns need marks, or by
// j's keys and condition.
func joinInputsRead(j *Join, need []bool) (left, right []bool) {
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

// MarkRefs marks the columns e reads. A reference past cols (which a
// bound plan never has) marks nothing rather than panic here; evaluation
// reports it.
func MarkRefs(cols []bool, e expr.Expr) {
	expr.Visit(e, func(x expr.Expr) {
		if c, ok := x.(*expr.ColRef); ok && c.Idx >= 0 && c.Idx < len(cols) {
			cols[c.Idx] = true
		}
	})
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
