package exec

import (
	"math/rand"
	"sort"
	"testing"

	"streamdb/plan"
	"streamdb/types"
)

// TestRankListMatchesSortedSlice checks the blocked list against a plain
// sorted multiset under random adds, removals and truncations, with blocks
// small enough to split and empty often.
func TestRankListMatchesSortedSlice(t *testing.T) {
	defer func(n int) { rankListBlock = n }(rankListBlock)
	rankListBlock = 4
	tn := testTopN(plan.RowNumber, false, false, -1, 0)
	rng := rand.New(rand.NewSource(11))
	var l rankList
	ref := map[int64]int64{} // k -> count (rows are (0, k, 0))
	row := func(k int64) types.Row { return types.Row{types.NewInt(0), types.NewInt(k), types.NewInt(0)} }
	for step := 0; step < 5000; step++ {
		k := int64(rng.Intn(60))
		n := int64(1)
		if ref[k] > 0 && rng.Intn(2) == 0 {
			n = -1
		}
		e, err := newRankEntry(tn.Order, row(k))
		if err != nil {
			t.Fatal(err)
		}
		got := l.add(tn.Order, e, n)
		ref[k] += n
		if ref[k] == 0 {
			delete(ref, k)
		}
		if got.count != ref[k] {
			t.Fatalf("step %d: count of %d is %d, want %d", step, k, got.count, ref[k])
		}
		if rng.Intn(500) == 0 {
			keep := rng.Intn(l.Len() + 1)
			for _, d := range l.truncate(keep) {
				delete(ref, d.row[1].I)
			}
		}
		var keys []int64
		for k := range ref {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		var walked []int64
		l.each(func(e *rankEntry) bool { walked = append(walked, e.row[1].I); return true })
		if len(walked) != len(keys) || l.Len() != len(keys) {
			t.Fatalf("step %d: list has %d entries (Len %d), want %d", step, len(walked), l.Len(), len(keys))
		}
		for i := range keys {
			if walked[i] != keys[i] {
				t.Fatalf("step %d: entry %d is %d, want %d", step, i, walked[i], keys[i])
			}
		}
		for _, b := range l.blocks {
			if len(b) == 0 || len(b) > rankListBlock {
				t.Fatalf("step %d: block of %d entries", step, len(b))
			}
		}
	}
}
