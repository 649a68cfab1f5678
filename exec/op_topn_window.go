package exec

import (
	"fmt"

	"streamdb/plan"
	"streamdb/types"
)

// Top-N per window. A top-N partitioned by a window's window_start or
// window_end over a watermarked stream (directly, or through an aggregate
// grouping by the window) gets no row of a window once the watermark
// reaches the window's end: late rows are dropped at the reader, and an
// aggregate emits a window's last change at the barrier that closes it,
// before the top-N's barrier. So at each barrier, after emitting, the
// top-N frees the partitions of closed windows, from memory and Pebble;
// their ranked rows stay in the view.

// findTopNCloser returns how t's partitions close, or nil.
func findTopNCloser(t *plan.TopN, state func(*plan.Scan) *watermarkState) *windowCloser {
	for _, p := range t.PartitionBy {
		col, ok := colRefIndex(p)
		if !ok {
			continue
		}
		if scan, offset, ok := traceWindowBound(t.Input, col); ok {
			return &windowCloser{st: state(scan), keyCol: col, offset: offset}
		}
	}
	return nil
}

// traceWindowBound is traceWindowEnd that also follows a group key of an
// aggregate.
func traceWindowBound(n plan.Node, col int) (*plan.Scan, int64, bool) {
	switch n := n.(type) {
	case *plan.Aggregate:
		if col < len(n.GroupBy) {
			if ref, ok := colRefIndex(n.GroupBy[col]); ok {
				return traceWindowBound(n.Input, ref)
			}
		}
		return nil, 0, false
	case *plan.Filter:
		return traceWindowBound(n.Input, col)
	case *plan.Project:
		if ref, ok := colRefIndex(n.Exprs[col]); ok {
			return traceWindowBound(n.Input, ref)
		}
		return nil, 0, false
	}
	return traceWindowEnd(n, col)
}

// closeWindowsBy makes op free the partitions of windows c reports closed,
// indexing the ones it holds.
func (op *topNOp) closeWindowsBy(c *windowCloser) {
	op.closer = c
	op.byEnd = map[int64][]string{}
	for pk, p := range op.parts {
		p.rows.each(func(e *rankEntry) bool {
			op.trackEnd(pk, e.row)
			return false
		})
	}
}

// trackEnd indexes the new partition pk, of row, by its window's end.
func (op *topNOp) trackEnd(pk string, row types.Row) {
	if op.closer == nil {
		return
	}
	if end, ok := op.closer.end(row); ok {
		op.byEnd[end] = append(op.byEnd[end], pk)
	}
}

// freeClosed drops the partitions of windows that ended at or before the
// watermark, and their state keys.
func (op *topNOp) freeClosed(e Epoch) error {
	if op.closer == nil {
		return nil
	}
	wm, ok := op.closer.closedBefore()
	if !ok {
		return nil
	}
	for end, pks := range op.byEnd {
		if end > wm {
			continue
		}
		for _, pk := range pks {
			p, live := op.parts[pk]
			if !live {
				continue
			}
			var err error
			p.rows.each(func(ent *rankEntry) bool {
				k, _ := op.entryKey(pk, ent)
				err = e.Batch.Delete(append(op.partKey(nil, pk), k[len(pk):]...), nil)
				return err == nil
			})
			if err != nil {
				return err
			}
			delete(op.parts, pk)
		}
		delete(op.byEnd, end)
	}
	return nil
}

// explainedTopN is a top-N shown by EXPLAIN with the partitions its
// watermark frees.
type explainedTopN struct {
	*plan.TopN
	cleaning string
}

func (t explainedTopN) Describe() string {
	return t.TopN.Describe() + " state cleaning: " + t.cleaning
}

// explainTopN is how EXPLAIN shows t: with its state cleaning, if any.
func explainTopN(t *plan.TopN) plan.Node {
	c := findTopNCloser(t, func(s *plan.Scan) *watermarkState { return &watermarkState{stream: s.Object.Name} })
	if c == nil {
		return t
	}
	return explainedTopN{TopN: t, cleaning: fmt.Sprintf("partitions when watermark(%s) >= %s",
		c.st.stream, plusOffset(t.Input.Schema()[c.keyCol].Name, c.offset))}
}
