package exec

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestAggregateIntervalGroups: from DataflowIntervalSpans on, an
// aggregate groups intervals PostgreSQL calls equal ('24:00:00' and
// '1 day', '1 mon' and '30 days') and shows, for each group, the interval
// of the row that created it, also once the group is read back from
// Pebble (a restart, or a cache of one group); count(DISTINCT) counts
// equal intervals once. A view of the format before keeps them apart, as
// it was created to.
func TestAggregateIntervalGroups(t *testing.T) {
	col := &expr.ColRef{Idx: 0, Name: "v", T: types.Interval}
	agg := &plan.Aggregate{
		GroupBy: []expr.Expr{col},
		Aggs: []plan.AggCall{
			{Func: "count", T: types.Int8},
			{Func: "count", Arg: col, Distinct: true, T: types.Int8},
		},
		Cols: []types.Column{{Name: "v", Type: types.Interval}, {Name: "n", Type: types.Int8}, {Name: "d", Type: types.Int8}},
	}
	const h = 3600e6
	epochs := [][]types.Datum{
		{types.NewInterval(0, 0, 24*h), types.NewInterval(0, 30, 0)},
		{types.NewInterval(0, 1, 0), types.NewInterval(1, 0, 0)},
		{types.NewInterval(0, 0, 24*h), types.NewInterval(0, 0, 30*24*h)},
	}
	// show nets the changes a view received into its rows.
	show := func(changes []string) string {
		net := map[string]int{}
		for _, c := range changes {
			if strings.HasPrefix(c, "-") {
				net[c[1:]]--
			} else {
				net[c[1:]]++
			}
		}
		var rows []string
		for k, n := range net {
			if n != 0 {
				rows = append(rows, fmt.Sprintf("%s x%d", k, n))
			}
		}
		slices.Sort(rows)
		return strings.Join(rows, "; ")
	}
	for _, c := range []struct {
		dataflow catalog.FormatVersion
		limit    int64 // groups cached; 0: all
		restart  bool  // a new operator over the same state after each epoch
		want     string
	}{
		{catalog.DataflowIntervalSpans, 0, false, "[24:00:00 3 1] x1; [30 days 3 1] x1"},
		{catalog.DataflowIntervalSpans, 0, true, "[24:00:00 3 1] x1; [30 days 3 1] x1"},
		{catalog.DataflowIntervalSpans, 1, false, "[24:00:00 3 1] x1; [30 days 3 1] x1"},
		{catalog.DataflowSharedWatermarkScans, 0, true, "[1 day 1 1] x1; [1 mon 1 1] x1; [24:00:00 2 1] x1; [30 days 1 1] x1; [720:00:00 1 1] x1"},
	} {
		t.Run(fmt.Sprintf("format=%d,limit=%d,restart=%v", c.dataflow, c.limit, c.restart), func(t *testing.T) {
			st := memoryStore(t)
			out := &textRows{cols: agg.Cols}
			var committed uint64
			open := func() *aggOp {
				op, err := newAggOp(agg, false, c.dataflow, storage.StatePrefix(1, 2), st,
					groupLimit{max: func() int64 { return c.limit }, committed: func() uint64 { return committed }}, out)
				if err != nil {
					t.Fatal(err)
				}
				return op
			}
			op := open()
			for i, vals := range epochs {
				ch := &Chunk{}
				for _, v := range vals {
					ch.Append(types.Row{v}, Insert)
				}
				if err := op.Push(ch); err != nil {
					t.Fatal(err)
				}
				b := st.NewBatch()
				if err := op.Barrier(Epoch{ID: uint64(i + 1), Batch: b}); err != nil {
					t.Fatal(err)
				}
				if err := st.Commit(b, false); err != nil {
					t.Fatal(err)
				}
				committed = uint64(i + 1)
				b.Close()
				if c.restart {
					op = open()
				}
			}
			if got := show(out.rows); got != c.want {
				t.Errorf("view rows\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestMultisetExtremeOfEqualIntervals: min and max kept as a multiset in
// the group (min(DISTINCT x), views of older formats) show, of equal
// intervals written differently, the smallest value encoding for min and
// the largest for max, whatever the order they came in or the map's.
func TestMultisetExtremeOfEqualIntervals(t *testing.T) {
	const h = 3600e6
	vals := []types.Datum{types.NewInterval(0, 1, 0), types.NewInterval(0, 0, 24*h), types.NewInterval(0, 0, 2*h)}
	for _, order := range [][]int{{0, 1, 2}, {1, 0, 2}, {2, 1, 0}} {
		for _, max := range []bool{false, true} {
			for round := range 20 { // map order varies
				a := &multisetExtremeAcc{max: max, counts: map[string]int64{}}
				for _, i := range order {
					if err := a.Add(vals[i], 1); err != nil {
						t.Fatal(err)
					}
				}
				want := "02:00:00"
				if max {
					// Value encodings order by months, days, then
					// microseconds: (0, 1, 0) after (0, 0, 24h).
					want = "1 day"
				}
				if got := types.FormatText(a.Result(), types.Interval); got != want {
					t.Fatalf("order %v max %v: cached result %s, want %s", order, max, got, want)
				}
				a.best = nil
				if got := types.FormatText(a.Result(), types.Interval); got != want {
					t.Fatalf("order %v max %v round %d: result %s, want %s", order, max, round, got, want)
				}
			}
		}
	}
}
