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

// migrateSumState rewrites, in b, the state of view d's aggregates whose
// sums keep special counts (streaming plan root, format
// catalog.DataflowJoinStatePaged; ups, the plans of the views it computes
// itself, whose aggregates are among its own) into the layout of
// DataflowSumSpecials. ok false, b untouched: the aggregates' tables
// cannot be found without building the dataflow (planTables), or one of
// them has a DISTINCT call or a group whose sum is not finite.
func migrateSumState(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	slots, ok := planTables(d, root, ups)
	if !ok {
		return false, nil
	}
	var moves []movedEntry
	for _, s := range slots {
		a, isAgg := s.Node.(*plan.Aggregate)
		if !isAgg || !hasSumWithSpecials(a) {
			continue
		}
		m, ok, err := respecialedSums(b, a, d.Dataflow, storage.StatePrefix(d.ID, s.Indexes[0]))
		if err != nil || !ok {
			return false, err
		}
		moves = append(moves, m...)
	}
	return true, moveEntries(b, moves)
}

// respecialSums rewrites, in b, the groups of aggregate a under prefix,
// kept in format from (< DataflowSumSpecials), with the special counts of
// their sums, zero. ok false: see migrateSumState; nothing is written.
func respecialSums(r storage.Reader, b *pebble.Batch, a *plan.Aggregate, from catalog.FormatVersion, prefix []byte) (bool, error) {
	moves, ok, err := respecialedSums(r, a, from, prefix)
	if err != nil || !ok {
		return false, err
	}
	return true, moveEntries(b, moves)
}

// respecialedSums is respecialSums, the groups' new values returned, not
// written.
func respecialedSums(r storage.Reader, a *plan.Aggregate, from catalog.FormatVersion, prefix []byte) ([]movedEntry, bool, error) {
	ao := appendOnly(a.Input)
	for _, c := range a.Aggs {
		if c.Distinct {
			return nil, false, nil
		}
	}
	var entries []movedEntry
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
		entries = append(entries, movedEntry{key: append([]byte(nil), k...), val: g.marshal(nil)})
		return nil
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return entries, true, nil
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
