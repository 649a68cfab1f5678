package exec

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// The step to catalog.DataflowSumSpecials adds to the state of sum() and
// avg() over numeric and floating-point values the counts of NaN,
// Infinity and -Infinity inputs, kept apart from the sum of the finite
// ones. A group whose old sum is finite had no such input counted (one
// would have left the sum NaN or infinite for good), so its new counts
// are zero and the step is exact; a group whose sum is NaN or infinite
// cannot be split, and its view stays at its format.

// aggTableIndex returns the aggregate of streaming plan root and its
// state table index, ok false when it cannot be told without building the
// dataflow: the plan must hold one aggregate, reached from the root
// through nodes of one input and no state, so that the builder numbers it
// first (see topNTableIndex), and scan no view (whose operators the
// dataflow computes itself before DataflowViewEdges). A view that
// records its layout finds the table by operator id (recordedTable).
func aggTableIndex(d *catalog.Descriptor, root plan.Node) (*plan.Aggregate, uint16, bool) {
	aggs := 0
	var agg *plan.Aggregate
	if anyNode(root, func(n plan.Node) bool {
		if a, ok := n.(*plan.Aggregate); ok {
			aggs++
			agg = a
		}
		return scansView(n) // its dataflow holds the view's operators too
	}) || aggs != 1 {
		return nil, 0, false
	}
	if d.OpState != nil {
		idx, ok := recordedTable(d, root, agg)
		return agg, idx, ok
	}
	for n := root; ; {
		switch x := n.(type) {
		case *plan.Aggregate:
			return x, firstOperatorIndex, true
		case *plan.Project, *plan.Filter:
		default:
			return nil, 0, false
		}
		n = n.Children()[0]
	}
}

// migrateSumState rewrites, in b, the state of view d's aggregate
// (streaming plan root, format catalog.DataflowJoinStatePaged) into the
// layout of DataflowSumSpecials. ok false, b untouched: the aggregate's
// table cannot be found without building the dataflow, it has a DISTINCT
// call, or a group's sum is not finite.
func migrateSumState(b *pebble.Batch, d *catalog.Descriptor, root plan.Node) (bool, error) {
	a, idx, ok := aggTableIndex(d, root)
	if !ok {
		return false, nil
	}
	return respecialSums(b, b, a, d.Dataflow, storage.StatePrefix(d.ID, idx))
}

// respecialSums rewrites, in b, the groups of aggregate a under prefix,
// kept in format from (< DataflowSumSpecials), with the special counts of
// their sums, zero. ok false: see migrateSumState; nothing is written.
func respecialSums(r storage.Reader, b *pebble.Batch, a *plan.Aggregate, from catalog.FormatVersion, prefix []byte) (bool, error) {
	ao := appendOnly(a.Input)
	for _, c := range a.Aggs {
		if c.Distinct {
			return false, nil
		}
	}
	type entry struct{ key, val []byte }
	var entries []entry
	ok := true
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		// Fresh accumulators per group: Unmarshal adds to some (the
		// counts of min and max over a retracting input).
		var sums []*sumAcc
		g := &aggGroup{accs: make([]Accumulator, len(a.Aggs))}
		for i, c := range a.Aggs {
			g.accs[i] = newAccumulator(c, ao, from)
			switch acc := g.accs[i].(type) {
			case *sumAcc:
				sums = append(sums, acc)
			case *avgAcc:
				sums = append(sums, &acc.sum)
			}
		}
		rest, err := readVarint(v, &g.rows)
		for _, acc := range g.accs {
			if err != nil {
				break
			}
			rest, err = acc.Unmarshal(rest)
		}
		if err != nil || len(rest) != 0 {
			ok = false
			return nil
		}
		for _, s := range sums {
			if !s.finite() {
				ok = false
				return nil
			}
			s.specials = true
		}
		entries = append(entries, entry{key: append([]byte(nil), k...), val: g.marshal(nil)})
		return nil
	})
	if err != nil || !ok {
		return false, err
	}
	for _, e := range entries {
		if err := b.Set(e.key, e.val, nil); err != nil {
			return false, err
		}
	}
	return true, nil
}

// finite reports whether a sum kept without special counts holds a finite
// value (no NaN or infinite input reached it).
func (a *sumAcc) finite() bool {
	switch {
	case a.argType == types.Interval, a.resType == types.Int8:
		return true
	case a.resType == types.Numeric:
		return a.d.Form == apd.Finite
	}
	return !math.IsNaN(a.f) && !math.IsInf(a.f, 0)
}
