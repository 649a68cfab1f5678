package exec

import (
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// windowRows returns the rows of w's output for one input row: one per
// window the row's event time falls in.
func windowRows(w *plan.Window, row types.Row) ([]types.Row, error) {
	var out []types.Row
	err := eachWindow(w, row, func(start int64) {
		r := make(types.Row, 0, len(row)+2)
		r = append(r, row...)
		out = append(out, append(r, types.NewTimestamp2000(start), types.NewTimestamp2000(start+w.Size)))
	})
	return out, err
}

// eachWindow calls fn with the start of every window of w that row's event
// time falls in, oldest first; a NULL time is in no window. A window whose
// bounds fall outside the timestamp range (an infinite event time, or one
// within a window's size of the range's ends) is an error of the row
// (22008), found before fn is called for any window of it.
func eachWindow(w *plan.Window, row types.Row, fn func(start int64)) error {
	t := row[w.TimeCol]
	if t.IsNull() {
		return nil
	}
	ts := t.I
	if !types.TimestampFinite(ts) {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: an infinite event time is in no window")
	}
	// The last window start at or before ts, on the slide grid (from
	// 1970-01-01, whatever epoch datums count from), and the oldest start
	// whose window still covers ts. Finite timestamps are far enough from
	// int64's ends, and sizes and slides at most plan.MaxWindowMicros, for
	// these sums not to overflow.
	last := ts - floorMod(floorMod(ts, w.Slide)-floorMod(types.UnixEpochMicros, w.Slide), w.Slide)
	if last <= ts-w.Size {
		return nil // a gap between windows (slide > size)
	}
	first := last
	for first-w.Slide > ts-w.Size {
		first -= w.Slide
	}
	if first < types.MinTimestampMicros || last >= types.EndTimestampMicros-w.Size {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: a window of %s starts or ends outside the timestamp range",
			types.FormatText(t, types.Timestamp))
	}
	for start := first; start <= last; start += w.Slide {
		fn(start)
	}
	return nil
}

// floorMod is a mod b with b's sign (b > 0: from 0 to b-1).
func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// windowOp assigns windows to each change. A HOP window makes several rows
// of the input's full width per input row; allocating them anew was most of
// a windowed aggregate's garbage, hence its recycled output chunk.
type windowOp struct {
	w    *plan.Window
	next Operator
	out  outputChunk
	errs *viewErrors
}

func newWindowOp(w *plan.Window, next Operator) *windowOp {
	return &windowOp{w: w, next: next}
}

func (op *windowOp) Push(c *Chunk) error {
	out := op.out.get(op.next)
	for i, row := range c.Rows {
		err := eachWindow(op.w, row, func(start int64) {
			r := out.newRow(len(row) + 2)
			copy(r, row)
			r[len(row)] = types.NewTimestamp2000(start)
			r[len(row)+1] = types.NewTimestamp2000(start + op.w.Size)
			out.keepRow(r, c.Signs[i])
		})
		if err != nil {
			// No window of the row was made: it is skipped whole.
			if err := op.errs.skip("window", err); err != nil {
				return err
			}
			continue
		}
		// A hopping window makes several rows of each: pass them on in
		// pieces the size of an input chunk, which the next operators
		// read while they are still in the CPU's cache.
		if out.Len() >= chunkRows {
			if err := op.next.Push(out); err != nil {
				return err
			}
			out = op.out.get(op.next)
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return op.next.Push(out)
}

func (op *windowOp) Barrier(e Epoch) error { return op.next.Barrier(e) }
