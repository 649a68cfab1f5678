package exec

import (
	"streamdb/plan"
)

// neededColumns records, for the stream scans of a view's dataflow, which
// of their columns some operator above reads. A stream reader decodes the
// others only as far as needed to validate them (see RowDecoder.Skip), so
// that a query over two columns of a wide stream does not copy every text
// field of every message. Rows keep their full width: unread columns are
// NULL, which no operator sees because none reads them.
//
// Only scan rows change, and stream rows are never retracted, so state
// written before this analysis existed (rows with every column) stays
// consistent with rows read now.
type neededColumns map[*plan.Scan][]bool

// mark walks n, whose output columns need[i] are read above it, down to
// its scans.
func (nc neededColumns) mark(n plan.Node, need []bool) {
	switch n := n.(type) {
	case *plan.Scan:
		own := nc[n]
		if own == nil {
			own = make([]bool, len(n.Cols))
			nc[n] = own
		}
		plan.OrColumns(own, need)
		if w := n.Watermark; w != nil {
			own[w.Col] = true
			plan.MarkRefs(own, w.Expr)
		}
	case *plan.Filter:
		in := plan.ResizeColumns(need, len(n.Input.Schema()))
		plan.MarkRefs(in, n.Cond)
		nc.mark(n.Input, in)
	case *plan.Project:
		in := make([]bool, len(n.Input.Schema()))
		for j, e := range n.Exprs {
			if j < len(need) && need[j] {
				plan.MarkRefs(in, e)
			}
		}
		nc.mark(n.Input, in)
	case *plan.Window:
		in := plan.ResizeColumns(need, len(n.Input.Schema()))
		in[n.TimeCol] = true
		nc.mark(n.Input, in)
	case *plan.Union:
		for _, c := range n.Inputs {
			nc.mark(c, plan.ResizeColumns(need, len(c.Schema())))
		}
	case *plan.Join:
		left, right := plan.JoinInputsRead(n, need)
		nc.mark(n.Left, left)
		nc.mark(n.Right, right)
	case *plan.Aggregate:
		in := make([]bool, len(n.Input.Schema()))
		for _, g := range n.GroupBy {
			plan.MarkRefs(in, g)
		}
		for _, a := range n.Aggs {
			if a.Arg != nil {
				plan.MarkRefs(in, a.Arg)
			}
		}
		nc.mark(n.Input, in)
	case *plan.TopN:
		in := plan.ResizeColumns(need, len(n.Input.Schema()))
		for _, p := range n.PartitionBy {
			plan.MarkRefs(in, p)
		}
		for _, k := range n.Order {
			plan.MarkRefs(in, k.Expr)
		}
		nc.mark(n.Input, in)
	case *plan.Sort:
		in := plan.ResizeColumns(need, len(n.Input.Schema()))
		for _, k := range n.Keys {
			plan.MarkRefs(in, k.Expr)
		}
		nc.mark(n.Input, in)
	case *plan.Limit:
		nc.mark(n.Input, plan.ResizeColumns(need, len(n.Input.Schema())))
	default:
		// An operator this analysis does not know reads everything.
		for _, c := range n.Children() {
			nc.mark(c, plan.AllColumns(len(c.Schema())))
		}
	}
}
