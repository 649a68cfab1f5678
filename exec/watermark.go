package exec

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// Event-time watermarks. A stream declared WITH WATERMARK FOR ts AS <expr>
// gets a watermarkOp right after each of its readers. The watermark is the
// largest <expr> over the rows read so far, advanced row by row, so which
// rows are late depends only on the order of the stream, never on where
// barriers fall. A row whose event time is below the watermark when it
// arrives is late: it is dropped and counted. Every window that ends at or
// before the watermark can therefore never change again, and aggregates
// grouping by such a window free its state (its result row stays in the
// view).

// watermarkState is one reader's watermark, shared with the aggregates
// that close windows by it. Only the pipeline goroutine writes it; the
// system table streamdb_watermarks reads it from other goroutines, hence
// the atomics.
type watermarkState struct {
	view   string
	stream string
	valid  atomic.Bool
	value  atomic.Int64 // microseconds
	late   atomic.Uint64
}

type watermarkOp struct {
	spec  *plan.Watermark
	st    *watermarkState
	key   []byte
	dirty bool
	next  Operator
	errs  *viewErrors
}

func newWatermarkOp(spec *plan.Watermark, st *watermarkState, key []byte, store *storage.Store, next Operator) (*watermarkOp, error) {
	op := &watermarkOp{spec: spec, st: st, key: key, next: next}
	v, ok, err := store.Get(key)
	if err != nil {
		return nil, err
	}
	if ok && len(v) == 17 {
		valid, wm, late, err := decodeWatermark(v)
		if err != nil {
			return nil, fmt.Errorf("watermark of %s: %w", st.stream, err)
		}
		st.valid.Store(valid)
		st.value.Store(wm)
		st.late.Store(late)
	}
	return op, nil
}

// A watermark's state is 17 bytes: flags, the watermark, the count of
// late rows. The watermark is in microseconds since 1970
// (types.UnixMicros), as it was stored before timestamp datums counted
// from 2000, unless flag watermarkLong says it is a datum's own
// microseconds: only for watermarks that form cannot hold.
const (
	watermarkValid = 1 << 0
	watermarkLong  = 1 << 1
)

func encodeWatermark(valid bool, wm int64, late uint64) []byte {
	v := make([]byte, 17)
	if valid {
		v[0] = watermarkValid
	}
	if unix, ok := types.UnixMicros(wm); ok {
		wm = unix
	} else {
		v[0] |= watermarkLong
	}
	binary.BigEndian.PutUint64(v[1:9], uint64(wm))
	binary.BigEndian.PutUint64(v[9:17], late)
	return v
}

// decodeWatermark reads the 17 bytes encodeWatermark writes.
func decodeWatermark(v []byte) (valid bool, wm int64, late uint64, err error) {
	valid, wm, late = v[0]&watermarkValid != 0, int64(binary.BigEndian.Uint64(v[1:9])), binary.BigEndian.Uint64(v[9:17])
	if v[0]&watermarkLong == 0 {
		var ok bool
		if wm, ok = types.FromUnixMicros(wm); !ok && valid {
			return false, 0, 0, fmt.Errorf("timestamp out of range")
		}
	}
	return valid, wm, late, nil
}

func (op *watermarkOp) Push(c *Chunk) error {
	out := &Chunk{}
	valid, wm := op.st.valid.Load(), op.st.value.Load()
	for i, row := range c.Rows {
		t := row[op.spec.Col]
		if valid && !t.IsNull() && t.I < wm {
			op.st.late.Add(1)
			op.dirty = true
			continue
		}
		w, err := op.spec.Expr.Eval(row)
		if err != nil {
			// The row is skipped before it moves the watermark: whether
			// it fails depends on the row alone.
			if err := op.errs.skip("watermark", err); err != nil {
				return err
			}
			continue
		}
		out.Append(row, c.Signs[i])
		if !w.IsNull() && (!valid || w.I > wm) {
			valid, wm, op.dirty = true, w.I, true
		}
	}
	op.st.value.Store(wm)
	op.st.valid.Store(valid)
	if out.Len() == 0 {
		return nil
	}
	return op.next.Push(out)
}

func (op *watermarkOp) Barrier(e Epoch) error {
	if op.dirty {
		v := encodeWatermark(op.st.valid.Load(), op.st.value.Load(), op.st.late.Load())
		if err := e.Batch.Set(op.key, v, nil); err != nil {
			return err
		}
		op.dirty = false
	}
	return op.next.Barrier(e)
}

// windowCloser tells an aggregate which of its groups are closed: those
// whose window (group key column keyCol, plus offset to get the window's
// end) ends at or before the watermark.
type windowCloser struct {
	st     *watermarkState
	keyCol int
	offset int64
}

func (c *windowCloser) end(key types.Row) (int64, bool) {
	v := key[c.keyCol]
	if v.IsNull() {
		return 0, false
	}
	return v.I + c.offset, true
}

// closedBefore returns the watermark: windows ending at or before it are
// closed.
func (c *windowCloser) closedBefore() (int64, bool) { return c.st.value.Load(), c.st.valid.Load() }

// findWindowCloser returns how a's groups close, when one of its group
// keys is a window bound over a stream with a watermark on the window's
// time column; states maps each such scan to the watermark its reader
// will keep.
func findWindowCloser(a *plan.Aggregate, state func(*plan.Scan) *watermarkState) *windowCloser {
	if !plan.AppendOnly(a.Input) {
		return nil
	}
	for i, g := range a.GroupBy {
		col, ok := colRefIndex(g)
		if !ok {
			continue
		}
		scan, offset, ok := traceWindowEnd(a.Input, col)
		if ok {
			return &windowCloser{st: state(scan), keyCol: i, offset: offset}
		}
	}
	return nil
}

// traceWindowEnd follows output column col of n through filters and
// projections to a window's window_start or window_end, and that window's
// time column down to a stream scan whose watermark is on that column.
func traceWindowEnd(n plan.Node, col int) (*plan.Scan, int64, bool) {
	switch n := n.(type) {
	case *plan.Filter:
		return traceWindowEnd(n.Input, col)
	case *plan.Project:
		if ref, ok := colRefIndex(n.Exprs[col]); ok {
			return traceWindowEnd(n.Input, ref)
		}
	case *plan.Window:
		in := len(n.Input.Schema())
		var offset int64
		switch col {
		case in: // window_start
			offset = n.Size
		case in + 1: // window_end
		default:
			return nil, 0, false
		}
		scan, scanCol, ok := traceToScan(n.Input, n.TimeCol)
		if ok && scan.Watermark != nil && scan.Watermark.Col == scanCol {
			return scan, offset, true
		}
	}
	return nil, 0, false
}

func traceToScan(n plan.Node, col int) (*plan.Scan, int, bool) {
	switch n := n.(type) {
	case *plan.Scan:
		return n, col, true
	case *plan.Filter:
		return traceToScan(n.Input, col)
	case *plan.Project:
		if ref, ok := colRefIndex(n.Exprs[col]); ok {
			return traceToScan(n.Input, ref)
		}
	}
	return nil, 0, false
}

// WatermarkInfo is one view's reader of a stream with a watermark.
type WatermarkInfo struct {
	View, Stream string
	Valid        bool  // false until a row gave a watermark
	Watermark    int64 // microseconds
	LateRows     uint64
}

// Watermarks lists every running view's watermarks, by view and stream.
func (rt *Runtime) Watermarks() []WatermarkInfo {
	var out []WatermarkInfo
	rt.late.Range(func(_, v any) bool {
		for _, st := range v.([]*watermarkState) {
			out = append(out, WatermarkInfo{View: st.view, Stream: st.stream, Valid: st.valid.Load(),
				Watermark: st.value.Load(), LateRows: st.late.Load()})
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].View != out[j].View {
			return out[i].View < out[j].View
		}
		return out[i].Stream < out[j].Stream
	})
	return out
}

// explainedAggregate is an aggregate shown by EXPLAIN with the windows its
// watermark closes.
type explainedAggregate struct {
	*plan.Aggregate
	cleaning string
}

func (a explainedAggregate) Describe() string {
	return a.Aggregate.Describe() + " state cleaning: " + a.cleaning
}

// explainAggregate is how EXPLAIN shows a: with the groups its watermark
// frees, if any.
func explainAggregate(a *plan.Aggregate) plan.Node {
	c := findWindowCloser(a, func(s *plan.Scan) *watermarkState { return &watermarkState{stream: s.Object.Name} })
	if c == nil {
		return a
	}
	return explainedAggregate{Aggregate: a, cleaning: fmt.Sprintf("groups when watermark(%s) >= %s",
		c.st.stream, plusOffset(a.Schema()[c.keyCol].Name, c.offset))}
}

// plusOffset shows column name plus an offset in microseconds, as EXPLAIN
// states state cleaning rules.
func plusOffset(name string, us int64) string {
	if us == 0 {
		return name
	}
	return name + " + " + (time.Duration(us) * time.Microsecond).String()
}
