package plan

import (
	"slices"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/types"
)

func testScan(name string, cols ...string) *Scan {
	s := &Scan{Object: &catalog.Descriptor{Name: name, Kind: catalog.KindStream}}
	for _, c := range cols {
		t := types.Int8
		if c == "ts" {
			t = types.Timestamp
		}
		s.Cols = append(s.Cols, types.Column{Name: c, Type: t})
	}
	return s
}

func col(n Node, i int) *expr.ColRef {
	c := n.Schema()[i]
	return &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}
}

func mustBinary(t *testing.T, op string, l, r expr.Expr) expr.Expr {
	t.Helper()
	e, err := expr.Binary(op, l, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A windowed aggregate over a join reads four of the join's nine columns:
// each input is narrowed under the join, the window's time column moves
// with its input, and the output keeps its columns.
func TestPruneColumnsJoinWindowAggregate(t *testing.T) {
	a := testScan("a", "id", "cat", "x1", "x2", "lo")
	b := testScan("b", "aid", "price", "ts", "y1")
	j := &Join{Kind: InnerJoin, Left: a, Right: b,
		LeftKeys: []expr.Expr{col(a, 0)}, RightKeys: []expr.Expr{col(b, 0)},
		Cols: append(slices.Clone(a.Cols), b.Cols...)}
	j.Cond = mustBinary(t, ">=", col(j, 6), col(j, 6)) // reads b.price
	j.Cond = mustBinary(t, "AND", j.Cond, mustBinary(t, ">", col(j, 5), col(j, 4)))
	w := &Window{Input: j, TimeCol: 7, Size: 10, Slide: 10,
		Cols: append(slices.Clone(j.Cols), types.Column{Name: "window_start", Type: types.Timestamp}, types.Column{Name: "window_end", Type: types.Timestamp})}
	agg := &Aggregate{Input: w, GroupBy: []expr.Expr{col(w, 1), col(w, 10)},
		Aggs: []AggCall{{Func: "max", Arg: col(w, 6), T: types.Int8}},
		Cols: []types.Column{{Name: "cat", Type: types.Int8}, {Name: "window_end", Type: types.Timestamp}, {Name: "max", Type: types.Int8}}}
	before := Explain(agg)

	got := Explain(PruneColumns(agg))
	want := `Aggregate group=[cat, window_end] aggs=[max(price)]
  └─ Tumble ts size=10us
    └─ Join inner on [id = aid] filter ((price >= price) AND (aid > lo))
      └─ Project id, cat, lo
        └─ Scan stream a
      └─ Project aid, price, ts
        └─ Scan stream b
`
	if got != want {
		t.Errorf("pruned plan:\n%s\nwant:\n%s", got, want)
	}
	if after := Explain(agg); after != before {
		t.Errorf("PruneColumns modified its input:\n%s\nwas:\n%s", after, before)
	}
	p := PruneColumns(agg).(*Aggregate)
	win := p.Input.(*Window)
	if win.TimeCol != 5 || len(win.Cols) != 8 || win.Cols[7].Name != "window_end" {
		t.Errorf("window: time column %d, columns %v", win.TimeCol, win.Cols)
	}
	if g := p.GroupBy[1].(*expr.ColRef); g.Idx != 7 {
		t.Errorf("group by window_end reads column %d, want 7", g.Idx)
	}
	if m := p.Aggs[0].Arg.(*expr.ColRef); m.Idx != 4 {
		t.Errorf("max(price) reads column %d, want 4", m.Idx)
	}
}

// Projections keep only what is read; count(*) reads nothing, and the
// root keeps every column.
func TestPruneColumnsProjections(t *testing.T) {
	s := testScan("s", "a", "b", "c")
	inner := &Project{Input: s, Exprs: []expr.Expr{col(s, 2), mustBinary(t, "+", col(s, 0), col(s, 1))},
		Cols: []types.Column{{Name: "c", Type: types.Int8}, {Name: "ab", Type: types.Int8}}}
	count := &Aggregate{Input: inner, Aggs: []AggCall{{Func: "count", T: types.Int8}}, Cols: []types.Column{{Name: "count", Type: types.Int8}}}
	if got, want := Explain(PruneColumns(count)), "Aggregate group=[] aggs=[count(*)]\n  └─ Project (no columns)\n    └─ Scan stream s\n"; got != want {
		t.Errorf("count(*):\n%s\nwant:\n%s", got, want)
	}
	if got, want := Explain(PruneColumns(inner)), Explain(inner); got != want {
		t.Errorf("root projection:\n%s\nwant:\n%s", got, want)
	}
	outer := &Project{Input: inner, Exprs: []expr.Expr{col(inner, 1)}, Cols: []types.Column{{Name: "ab", Type: types.Int8}}}
	p := PruneColumns(outer).(*Project)
	if got, want := Explain(p), "Project ab\n  └─ Project (a + b) AS ab\n    └─ Scan stream s\n"; got != want {
		t.Errorf("projection over projection:\n%s\nwant:\n%s", got, want)
	}
	if ref := p.Exprs[0].(*expr.ColRef); ref.Idx != 0 {
		t.Errorf("outer projection reads column %d, want 0", ref.Idx)
	}
}
