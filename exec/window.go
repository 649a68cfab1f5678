package exec

import (
	"streamdb/plan"
	"streamdb/types"
)

// windowRows returns the rows of w's output for one input row: one per
// window the row's event time falls in.
func windowRows(w *plan.Window, row types.Row) []types.Row {
	var out []types.Row
	eachWindow(w, row, func(start int64) {
		r := make(types.Row, 0, len(row)+2)
		r = append(r, row...)
		out = append(out, append(r, types.NewTimestampMicros(start), types.NewTimestampMicros(start+w.Size)))
	})
	return out
}

// eachWindow calls fn with the start of every window of w that row's event
// time falls in, oldest first; a NULL time is in no window.
func eachWindow(w *plan.Window, row types.Row, fn func(start int64)) {
	t := row[w.TimeCol]
	if t.IsNull() {
		return
	}
	ts := t.I
	// The last window start at or before ts, on the slide grid, and the
	// oldest start whose window still covers ts.
	last := floorDiv(ts, w.Slide) * w.Slide
	if last <= ts-w.Size {
		return // a gap between windows (slide > size)
	}
	first := last
	for first-w.Slide > ts-w.Size {
		first -= w.Slide
	}
	for start := first; start <= last; start += w.Slide {
		fn(start)
	}
}

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
}

// outputChunk gives an operator that builds new rows the chunk for them.
// When the operators after it only read rows while Push runs (see
// borrowsRows), it is one chunk whose storage every use carves again;
// otherwise a new one each time. It decides at the first use: a tee's
// outputs are wired after the operators before it are made.
type outputChunk struct {
	decided bool
	reuse   bool // next does not keep rows past Push
	c       Chunk
}

// get returns an empty chunk for rows to be pushed to next.
func (o *outputChunk) get(next Operator) *Chunk {
	if !o.decided {
		o.reuse, o.decided = borrowsRows(next), true
	}
	if !o.reuse {
		return &Chunk{}
	}
	o.c.recycle()
	return &o.c
}

func newWindowOp(w *plan.Window, next Operator) *windowOp {
	return &windowOp{w: w, next: next}
}

// borrowsRows reports whether op reads the rows pushed to it only during
// Push: an aggregate copies group keys and argument values, a projection
// copies the columns it keeps (unless it passes prefixes of the input rows
// on), a window copies each row into its windowed rows, a join copies the
// rows it keeps and builds its output rows, and a filter or a tee borrows
// when what it passes rows to does.
func borrowsRows(op Operator) bool {
	switch op := op.(type) {
	case *aggOp, *windowOp, *joinPort:
		return true
	case *filterOp:
		return borrowsRows(op.next)
	case *projectOp:
		if op.cols == nil {
			op.init()
		}
		return !op.prefix || borrowsRows(op.next)
	case *teeOp:
		for _, o := range op.outputs {
			if !borrowsRows(o) {
				return false
			}
		}
		return true
	}
	return false
}

func (op *windowOp) Push(c *Chunk) error {
	out := op.out.get(op.next)
	for i, row := range c.Rows {
		eachWindow(op.w, row, func(start int64) {
			r := out.newRow(len(row) + 2)
			copy(r, row)
			r[len(row)] = types.NewTimestampMicros(start)
			r[len(row)+1] = types.NewTimestampMicros(start + op.w.Size)
			out.keepRow(r, c.Signs[i])
		})
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
