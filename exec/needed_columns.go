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
		// A generated column's inputs are decoded whether or not a view
		// reads it: a message its expression fails on is skipped by every
		// view of the stream alike.
		for _, g := range n.Generated {
			plan.MarkRefs(own, g.Expr)
		}
	default:
		for i, in := range plan.InputsRead(n, need) {
			nc.mark(n.Children()[i], in)
		}
	}
}
