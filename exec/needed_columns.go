package exec

import (
	"streamdb/catalog"
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
		// The inputs of generated columns are not marked: the decoder
		// reads them whether or not a view does (RowDecoder.SkipUnread),
		// and reads a jsonb member that only generated columns read,
		// through chains, from its text (rawPaths).
	default:
		for i, in := range plan.InputsRead(n, need) {
			nc.mark(n.Children()[i], in)
		}
	}
}

// ColumnsRead returns, for each stream scan of the bound plan root (a
// view's), which of its columns the view reads: those an operator above
// reads, a watermark's, and the inputs of the generated columns among
// them.
func ColumnsRead(root plan.Node) map[*plan.Scan][]bool {
	nc := neededColumns{}
	nc.markRead(root, plan.AllColumns(len(root.Schema())))
	return nc
}

// markRead is mark without the inputs of generated columns no one reads.
func (nc neededColumns) markRead(n plan.Node, need []bool) {
	s, ok := n.(*plan.Scan)
	if !ok {
		for i, in := range plan.InputsRead(n, need) {
			nc.markRead(n.Children()[i], in)
		}
		return
	}
	if s.Object.Kind != catalog.KindStream {
		return
	}
	own := nc[s]
	if own == nil {
		own = make([]bool, len(s.Cols))
		nc[s] = own
	}
	plan.OrColumns(own, need)
	if w := s.Watermark; w != nil {
		own[w.Col] = true
		plan.MarkRefs(own, w.Expr)
	}
	for _, g := range s.Generated {
		if own[g.Col] {
			plan.MarkRefs(own, g.Expr)
		}
	}
}
