package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// TestSkipUnreadMatchesFullDecode decodes random messages with a decoder
// that reads every column and one told that only some are read: both
// must accept and refuse the same messages (a stream's views all see the
// same rows), and agree on the columns that are read.
func TestSkipUnreadMatchesFullDecode(t *testing.T) {
	seed := int64(7)
	rng := rand.New(rand.NewSource(seed))
	full := NewRowDecoder(decodeCols)
	for _, need := range [][]bool{
		{true, false, false, false, false, false, false, false, false},
		{false, false, true, false, true, false, false, false, true},
		{false, false, false, false, false, false, false, false, false},
	} {
		part := NewRowDecoder(decodeCols)
		part.SkipUnread(need)
		skipped := 0
		for iter := 0; iter < 20000; iter++ {
			msg := randMessage(rng)
			want, werr := full.Decode(msg)
			got, gerr := part.Decode(msg)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("seed %d need %v %q: full decode err %v, partial err %v", seed, need, msg, werr, gerr)
			}
			if werr != nil {
				continue
			}
			for i := range decodeCols {
				if need[i] || !part.skip[i] {
					if w, g := fmt.Sprint(want[i]), fmt.Sprint(got[i]); w != g {
						t.Fatalf("seed %d need %v %q column %d: full %s, partial %s", seed, need, msg, i, w, g)
					}
				} else if !got[i].IsNull() {
					t.Fatalf("seed %d %q: skipped column %d decoded to %v", seed, msg, i, got[i])
				} else if !want[i].IsNull() {
					skipped++
				}
			}
		}
		if need[1] == false && skipped == 0 {
			t.Fatalf("seed %d need %v: no text value was skipped: the test exercises nothing", seed, need)
		}
	}
	// Only plain text columns are skipped: a VARCHAR(3) must still be
	// checked for length.
	part := NewRowDecoder(decodeCols)
	part.SkipUnread(make([]bool, len(decodeCols)))
	for i, c := range decodeCols {
		if want := c.Name == "s"; part.skip[i] != want {
			t.Errorf("column %s: skip %v, want %v", c.Name, part.skip[i], want)
		}
	}
}

// TestNeededColumns checks the analysis on a windowed aggregate, a join
// with a residual condition and a union.
func TestNeededColumns(t *testing.T) {
	col := func(i int, name string) *expr.ColRef { return &expr.ColRef{Idx: i, Name: name, T: types.Int8} }
	stream := &catalog.Descriptor{ID: 1, Name: "s", Kind: catalog.KindStream}
	scanOf := func() *plan.Scan {
		return &plan.Scan{Object: stream, Cols: []types.Column{
			{Name: "a", Type: types.Int8}, {Name: "b", Type: types.Int8}, {Name: "c", Type: types.Text}, {Name: "ts", Type: types.Timestamp}}}
	}
	// SELECT a, window_start, sum(b) FROM HOP(s, ts, ...) GROUP BY a, window_start
	s1 := scanOf()
	win := &plan.Window{Input: s1, TimeCol: 3, Size: 10, Slide: 2,
		Cols: append(append([]types.Column(nil), s1.Cols...), types.Column{Name: "window_start", Type: types.Timestamp}, types.Column{Name: "window_end", Type: types.Timestamp})}
	agg := &plan.Aggregate{Input: win, GroupBy: []expr.Expr{col(0, "a"), col(4, "window_start")},
		Aggs: []plan.AggCall{{Func: "sum", Arg: col(1, "b"), T: types.Numeric}},
		Cols: []types.Column{{Name: "a"}, {Name: "window_start"}, {Name: "sum"}}}
	// SELECT l.a, r.c FROM s l JOIN s r ON l.a = r.a AND l.b < r.ts (column 4+3)
	l, r := scanOf(), scanOf()
	join := &plan.Join{Left: l, Right: r, LeftKeys: []expr.Expr{col(0, "a")}, RightKeys: []expr.Expr{col(0, "a")},
		Cond: &expr.Func{Name: "<", Args: []expr.Expr{col(1, "b"), col(7, "ts")}, T: types.Bool},
		Cols: append(append([]types.Column(nil), l.Cols...), r.Cols...)}
	proj := &plan.Project{Input: join, Exprs: []expr.Expr{col(0, "a"), col(6, "c")}, Cols: []types.Column{{Name: "a"}, {Name: "c"}}}
	// SELECT a FROM s UNION ALL SELECT b FROM s, filtered on c
	u1, u2 := scanOf(), scanOf()
	union := &plan.Union{Inputs: []plan.Node{
		&plan.Project{Input: u1, Exprs: []expr.Expr{col(0, "a")}, Cols: []types.Column{{Name: "a"}}},
		&plan.Project{Input: &plan.Filter{Input: u2, Cond: &expr.Func{Name: "IS NULL", Args: []expr.Expr{col(2, "c")}, T: types.Bool}},
			Exprs: []expr.Expr{col(1, "b")}, Cols: []types.Column{{Name: "b"}}},
	}, Cols: []types.Column{{Name: "a"}}}
	for _, tc := range []struct {
		root  plan.Node
		scans []*plan.Scan
		want  []string
	}{
		{agg, []*plan.Scan{s1}, []string{"[true true false true]"}},
		{proj, []*plan.Scan{l, r}, []string{"[true true false false]", "[true false true true]"}},
		{union, []*plan.Scan{u1, u2}, []string{"[true false false false]", "[false true true false]"}},
	} {
		nc := neededColumns{}
		nc.mark(tc.root, plan.AllColumns(len(tc.root.Schema())))
		for i, s := range tc.scans {
			if got := fmt.Sprint(nc[s]); got != tc.want[i] {
				t.Errorf("%s: scan %d reads %s, want %s", tc.root.Describe(), i, got, tc.want[i])
			}
		}
	}
}

// Views keep the layout they were created with: only from
// DataflowNarrowRows on is the plan pruned before it is built.
func TestStreamingPlanByLayout(t *testing.T) {
	s := &plan.Scan{Object: &catalog.Descriptor{ID: 1, Name: "s", Kind: catalog.KindStream}, Cols: []types.Column{{Name: "a", Type: types.Int8}}}
	proj := &plan.Project{Input: s, Exprs: []expr.Expr{&expr.ColRef{Idx: 0, Name: "a", T: types.Int8}}, Cols: []types.Column{{Name: "a"}}}
	agg := &plan.Aggregate{Input: proj, Aggs: []plan.AggCall{{Func: "count", T: types.Int8}}, Cols: []types.Column{{Name: "n", Type: types.Int8}}}
	if got := streamingPlan(catalog.DataflowAppendOnlyJoins, agg); got != agg {
		t.Errorf("layout %d: plan changed to\n%s", catalog.DataflowAppendOnlyJoins, plan.Explain(got))
	}
	got := streamingPlan(catalog.DataflowNarrowRows, agg)
	if p := got.(*plan.Aggregate).Input.(*plan.Project); len(p.Exprs) != 0 {
		t.Errorf("layout %d: count(*) over a projection still computes %d columns", catalog.DataflowNarrowRows, len(p.Exprs))
	}
}
