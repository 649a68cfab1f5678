package exec

import (
	"fmt"
	"strings"

	"streamdb/catalog"
	"streamdb/plan"
)

// A view that scans one stream several times (a self-join, q7's bids
// joined with their own per-window maximum, q5's two HOP aggregates) reads
// it once: one JetStream reader and one decoder, whose rows a teeOp hands
// to every scan's branch. Reading and decoding were most of the cost of
// such views, and the branches see the same rows in the same order with
// the same barriers as with a reader each.

// teeOp passes every chunk and barrier to each of its outputs, in order.
// Operators never modify the chunks they receive, so the outputs can
// share them.
type teeOp struct {
	outputs []Operator
}

func (t *teeOp) Push(c *Chunk) error {
	for _, o := range t.outputs {
		if err := o.Push(c); err != nil {
			return err
		}
	}
	return nil
}

func (t *teeOp) Barrier(e Epoch) error {
	for _, o := range t.outputs {
		if err := o.Barrier(e); err != nil {
			return err
		}
	}
	return nil
}

// sharedSource is the reader a view's scans of one stream share.
type sharedSource struct {
	tee  *teeOp
	dec  *RowDecoder
	need []bool // columns any of the scans reads
}

// addNeed makes the shared decoder decode the columns need marks too.
// (Readers start after the build, so the decoder is not in use yet.)
func (sh *sharedSource) addNeed(need []bool) {
	plan.OrColumns(sh.need, need)
	sh.dec.SkipUnread(sh.need)
}

// sharedScanKey identifies the scans that may share a reader under format
// dataflow: scans of the same stream with the same columns and watermark.
// It is "" for a scan that gets its own reader: for tables, and for
// streams with a WATERMARK before DataflowSharedWatermarkScans (each such
// scan filters by a watermark of its own).
func sharedScanKey(dataflow catalog.FormatVersion, s *plan.Scan) string {
	if s.Object.Kind != catalog.KindStream ||
		(s.Watermark != nil && dataflow < catalog.DataflowSharedWatermarkScans) {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d", s.Object.ID)
	for _, c := range s.Cols {
		fmt.Fprintf(&sb, "|%s:%s:%v", c.Name, c.Type, c.Mod)
	}
	if w := s.Watermark; w != nil {
		fmt.Fprintf(&sb, "|watermark %d:%s", w.Col, w.Text)
	}
	return sb.String()
}

// addStreamScan wires the stream scan s, whose rows go to next: to the
// view's reader of that stream when it has one to share, else to a new
// one. A stream's WATERMARK filters the rows right after the reader, so a
// shared reader's scans share its watermark (watermarkFor).
func (b *builder) addStreamScan(s *plan.Scan, next Operator) error {
	need, ok := b.need[s]
	if !ok {
		need = plan.AllColumns(len(s.Cols))
	}
	key := sharedScanKey(b.dataflow, s)
	if sh, ok := b.shared[key]; ok && key != "" {
		sh.tee.outputs = append(sh.tee.outputs, next)
		sh.addNeed(need)
		return nil
	}
	cols, missing, err := MessageColumns(s)
	if err != nil {
		return err
	}
	dec := NewMessageDecoder(cols, missing).WithMetadata(s.Object)
	dec.SetGenerated(s.Generated)
	dec.SkipUnread(need)
	if key != "" {
		sh := &sharedSource{tee: &teeOp{outputs: []Operator{next}}, dec: dec, need: append([]bool(nil), need...)}
		if b.shared == nil {
			b.shared = map[string]*sharedSource{}
		}
		b.shared[key] = sh
		next = sh.tee
	}
	if s.Watermark != nil {
		prefix, err := b.opPrefix()
		if err != nil {
			return err
		}
		wm, err := newWatermarkOp(s.Watermark, b.watermarkFor(s), prefix, b.rt.store, next)
		if err != nil {
			return err
		}
		next = wm
	}
	return b.addSource(s, dec, next)
}
