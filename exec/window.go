package exec

import (
	"streamdb/plan"
	"streamdb/types"
)

// windowRows returns the rows of w's output for one input row: one per
// window the row's event time falls in.
func windowRows(w *plan.Window, row types.Row) []types.Row {
	t := row[w.TimeCol]
	if t.IsNull() {
		return nil
	}
	ts := t.I
	// The last window start at or before ts, on the slide grid.
	last := floorDiv(ts, w.Slide) * w.Slide
	var out []types.Row
	for start := last; start > ts-w.Size; start -= w.Slide {
		r := make(types.Row, 0, len(row)+2)
		r = append(r, row...)
		r = append(r, types.NewTimestampMicros(start), types.NewTimestampMicros(start+w.Size))
		out = append(out, r)
	}
	// Oldest window first.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// windowOp assigns windows to each change.
type windowOp struct {
	w    *plan.Window
	next Operator
}

func (op *windowOp) Push(c *Chunk) error {
	out := &Chunk{}
	for i, row := range c.Rows {
		for _, r := range windowRows(op.w, row) {
			out.Append(r, c.Signs[i])
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return op.next.Push(out)
}

func (op *windowOp) Barrier(e Epoch) error { return op.next.Barrier(e) }
