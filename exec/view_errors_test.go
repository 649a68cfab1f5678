package exec

import (
	"fmt"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

func divide(t *testing.T, l, r expr.Expr) expr.Expr {
	t.Helper()
	e, err := expr.Binary("/", l, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func int8Col(i int) *expr.ColRef { return &expr.ColRef{Idx: i, T: types.Int8} }

func int8Const(v int64) *expr.Const { return &expr.Const{D: types.NewInt(v), T: types.Int8} }

func pushRows(t *testing.T, op Operator, rows ...types.Row) error {
	t.Helper()
	c := &Chunk{}
	for _, r := range rows {
		c.Append(r, Insert)
	}
	return op.Push(c)
}

func ints(vs ...int64) types.Row {
	r := make(types.Row, len(vs))
	for i, v := range vs {
		r[i] = types.NewInt(v)
	}
	return r
}

// skipMode returns a record of view 1 that skips failed rows without
// looking up the catalog.
func skipMode(st *storage.Store, fail bool) *viewErrors {
	ve := newViewErrors(st, 1, "q", nil)
	ve.modeRead, ve.fail = true, fail
	return ve
}

// TestProjectionSkipsFailedRow: SELECT id, 100 / x over x = 5, 0, 10
// yields the rows of 5 and 10, and records the row of 0 with its stream,
// sequence, operator and SQLSTATE; signs stay with their rows.
func TestProjectionSkipsFailedRow(t *testing.T) {
	st := memoryStore(t)
	cols := []types.Column{{Name: "id", Type: types.Int8}, {Name: "r", Type: types.Int8}}
	out := &textRows{cols: cols}
	p := &projectOp{exprs: []expr.Expr{int8Col(0), divide(t, int8Const(100), int8Col(1))}, next: out}
	ve := skipMode(st, false)
	attachViewErrors([]Operator{p}, ve)
	if p.errs != ve {
		t.Fatal("attachViewErrors did not reach the projection")
	}
	ve.from("s", 7)
	c := &Chunk{}
	c.Append(ints(1, 5), Insert)
	c.Append(ints(2, 0), Insert)
	c.Append(ints(3, 10), Delete)
	if err := p.Push(c); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got, want := fmt.Sprint(out.rows), "[+[1 20] -[3 10]]"; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	errs := ve.snapshot()
	if len(errs) != 1 || errs[0].Code != "22012" || errs[0].Stream != "s" || errs[0].Seq != 7 ||
		errs[0].Operator != "projection" || errs[0].Count != 1 || errs[0].View != "q" {
		t.Errorf("recorded %+v", errs)
	}
	// A chunk whose every row fails pushes nothing.
	out.rows = nil
	if err := pushRows(t, p, ints(4, 0)); err != nil || out.rows != nil {
		t.Errorf("all rows failing: err %v, output %v", err, out.rows)
	}

	// The count and the last errors are state: written at the barrier,
	// restored by the next record of the view.
	b := st.NewBatch()
	if err := ve.flush(b); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	b.Close()
	again := newViewErrors(st, 1, "q", nil)
	if got := again.snapshot(); len(got) != 2 || got[1].Count != 2 || got[0].Message != "division by zero" {
		t.Errorf("restored %+v", got)
	}
}

// TestOnErrorFailStops: with on_error = 'fail' the operator returns the
// row's error (the view stops), and an error that is not a row's (no
// SQLSTATE) stops the view in either mode.
func TestOnErrorFailStops(t *testing.T) {
	st := memoryStore(t)
	f := &filterOp{cond: divide(t, int8Const(100), int8Col(0)), next: discard{}}
	attachViewErrors([]Operator{f}, skipMode(st, true))
	if err := pushRows(t, f, ints(0)); err == nil || err.Error() != "division by zero" {
		t.Errorf("fail mode: push returned %v, want division by zero", err)
	}
	ve := skipMode(st, false)
	if err := ve.skip("filter", fmt.Errorf("pebble: closed")); err == nil {
		t.Error("an internal error was skipped")
	}
	if ve.count != 0 {
		t.Errorf("an internal error was counted")
	}
	var none *viewErrors
	if err := none.skip("filter", divByZeroErr(t)); err == nil {
		t.Error("an operator without a record skipped a row")
	}
}

func divByZeroErr(t *testing.T) error {
	_, err := divide(t, int8Const(1), int8Const(0)).Eval(nil)
	if err == nil {
		t.Fatal("1 / 0 evaluated")
	}
	return err
}

// TestAggregateSkipsWholeRow: a row whose argument fails leaves no trace
// in its group: count(*) does not count it although count comes first.
func TestAggregateSkipsWholeRow(t *testing.T) {
	st := memoryStore(t)
	agg := &plan.Aggregate{
		GroupBy: []expr.Expr{int8Col(0)},
		Aggs: []plan.AggCall{{Func: "count", T: types.Int8},
			{Func: "sum", Arg: divide(t, int8Const(100), int8Col(1)), T: types.Numeric}},
		Cols: []types.Column{{Name: "k", Type: types.Int8}, {Name: "n", Type: types.Int8}, {Name: "s", Type: types.Numeric}},
	}
	out := &textRows{cols: agg.Cols}
	op, err := newAggOp(agg, true, catalog.DataflowLatest, storage.StatePrefix(1, 2), st, groupLimit{max: func() int64 { return 0 }, committed: func() uint64 { return 0 }}, out)
	if err != nil {
		t.Fatal(err)
	}
	ve := skipMode(st, false)
	attachViewErrors([]Operator{&filterOp{cond: &expr.Const{D: types.NewBool(true), T: types.Bool}, next: op}}, ve)
	if op.errs != ve {
		t.Fatal("attachViewErrors did not reach the aggregate behind the filter")
	}
	// Group 2 gets only a failing row: it must not appear at all.
	if err := pushRows(t, op, ints(1, 5), ints(1, 0), ints(2, 0), ints(1, 10)); err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	defer b.Close()
	if err := op.Barrier(Epoch{ID: 1, Batch: b}); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(out.rows), "[+[1 2 30]]"; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	if ve.count != 2 {
		t.Errorf("counted %d failed rows, want 2", ve.count)
	}
}

// TestJoinErrors: a row whose join key fails is skipped, and a pair whose
// residual condition fails does not match, whichever side comes second.
func TestJoinErrors(t *testing.T) {
	for _, rightFirst := range []bool{false, true} {
		st := memoryStore(t)
		j := joinOnK(plan.InnerJoin)
		j.Left = &plan.Scan{Cols: []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Int8}}}
		j.Right = j.Left
		j.Cols = append(append([]types.Column(nil), j.Left.Schema()...), j.Left.Schema()...)
		j.LeftKeys = []expr.Expr{divide(t, int8Col(0), int8Col(0))} // k / k: fails for k = 0
		cond, err := expr.Binary(">", divide(t, int8Col(1), int8Col(3)), int8Const(0))
		if err != nil {
			t.Fatal(err)
		}
		j.Cond = cond // l.v / r.v > 0: fails for r.v = 0
		out := &textRows{cols: j.Cols}
		op, err := newJoinOp(j, storage.StatePrefix(1, 2), st.DB(), joinStateByPage, [2]bool{true, true}, out)
		if err != nil {
			t.Fatal(err)
		}
		ve := skipMode(st, false)
		attachViewErrors([]Operator{op.port(0), op.port(1)}, ve)
		left := []types.Row{ints(0, 1), ints(1, 4)}
		right := []types.Row{ints(1, 2), ints(1, 0)}
		if rightFirst {
			if err := pushRows(t, op.port(1), right...); err != nil {
				t.Fatal(err)
			}
		}
		if err := pushRows(t, op.port(0), left...); err != nil {
			t.Fatal(err)
		}
		if !rightFirst {
			if err := pushRows(t, op.port(1), right...); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := fmt.Sprint(out.rows), "[+[1 4 1 2]]"; got != want {
			t.Errorf("right first %v: output %s, want %s", rightFirst, got, want)
		}
		if ve.count != 2 {
			t.Errorf("right first %v: counted %d, want 2 (the key of 0, the pair with v = 0)", rightFirst, ve.count)
		}
	}
}
