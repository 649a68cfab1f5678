package exec

import (
	"fmt"
	"testing"

	"streamdb/catalog"
	"streamdb/storage"
	"streamdb/types"
)

// BenchmarkAggBarrierVNodes measures what a vnode in an aggregate's
// state keys costs (DataflowVNodeKeys against the format before it):
// each iteration folds 1024 rows into groups of 100,000 keys (count and
// sum) and runs the barrier that writes them, committed. Compare the two
// sub-benchmarks of one run.
func BenchmarkAggBarrierVNodes(b *testing.B) {
	for _, c := range []struct {
		name     string
		dataflow catalog.FormatVersion
		vnodes   int
	}{
		{"before", catalog.DataflowVNodeKeys - 1, 0},
		{"vnodes", catalog.DataflowVNodeKeys, catalog.DefaultVNodes},
	} {
		b.Run(c.name, func(b *testing.B) {
			st := memoryStore(b)
			agg := vnodeTestAgg()
			agg.Aggs, agg.Cols = agg.Aggs[:2], agg.Cols[:4]
			op, err := newAggOpWith(agg, false, c.dataflow, storage.StatePrefix(1, firstOperatorIndex), c.vnodes, st,
				groupLimit{max: func() int64 { return 16384 }, committed: func() uint64 { return 1 << 62 }}, nil, &textRows{cols: agg.Cols})
			if err != nil {
				b.Fatal(err)
			}
			iv := types.NewInterval(0, 1, 0)
			b.ResetTimer()
			for i := range b.N {
				ch := &Chunk{}
				for j := range 1024 {
					n := (i*1024 + j) * 7919
					ch.Append(types.Row{types.NewString(fmt.Sprintf("key%d", n%100000)), iv, types.NewInt(int64(n % 1000))}, Insert)
				}
				if err := op.Push(ch); err != nil {
					b.Fatal(err)
				}
				batch := st.NewBatch()
				if err := op.Barrier(Epoch{ID: uint64(i + 1), Batch: batch}); err != nil {
					b.Fatal(err)
				}
				if err := st.Commit(batch, false); err != nil {
					b.Fatal(err)
				}
				batch.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/row")
		})
	}
}
