package exec

import (
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// BenchmarkAggPush folds chunks of 1024 events into the aggregate of one
// of the fifty-views benchmark's views: SELECT k % 7, count(*), sum(v),
// max(k) FROM ev GROUP BY k % 7, over an append-only stream.
func BenchmarkAggPush(b *testing.B) {
	k := &expr.ColRef{Idx: 0, Name: "k", T: types.Int8}
	v := &expr.ColRef{Idx: 1, Name: "v", T: types.Int8}
	mod, err := expr.Binary("%", k, &expr.Const{D: types.NewInt(7), T: types.Int4})
	if err != nil {
		b.Fatal(err)
	}
	agg := &plan.Aggregate{
		GroupBy: []expr.Expr{mod},
		Aggs: []plan.AggCall{
			{Func: "count", T: types.Int8},
			{Func: "sum", Arg: v, T: types.Numeric},
			{Func: "max", Arg: k, T: types.Int8},
		},
		Cols: []types.Column{{Name: "g", Type: types.Int8}, {Name: "n", Type: types.Int8}, {Name: "s", Type: types.Numeric}, {Name: "top", Type: types.Int8}},
	}
	op, err := newAggOp(agg, true, catalog.DataflowLatest, storage.StatePrefix(1, 2), memoryStore(b),
		groupLimit{max: func() int64 { return 16384 }, committed: func() uint64 { return 0 }}, &textRows{})
	if err != nil {
		b.Fatal(err)
	}
	c := &Chunk{}
	for i := range 1024 {
		c.Append(types.Row{types.NewInt(int64(i * 7919 % 10000)), types.NewInt(int64(i))}, Insert)
	}
	b.ResetTimer()
	for range b.N {
		if err := op.Push(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/row")
}
