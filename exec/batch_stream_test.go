package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// TestStreamBatchLimitStopsReading checks that a LIMIT ends its input's
// scan once it has its rows: the projection 10 / (v - 4) fails on the
// fourth row, which LIMIT 3 never reads (PostgreSQL too returns the three
// rows), and which a query that reads every row does reach.
func TestStreamBatchLimitStopsReading(t *testing.T) {
	st := memoryStore(t)
	cols := []types.Column{{Name: "v", Type: types.Int8}}
	d := &catalog.Descriptor{ID: 7001, Name: "t", Kind: catalog.KindTable}
	b := st.NewBatch()
	for k := 1; k <= 1000; k++ {
		key := keyenc.Append(ViewTablePrefix(d.ID), types.NewInt(int64(k)))
		if err := b.Set(key, EncodeViewValue(types.Row{types.NewInt(int64(k))}, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	v := &expr.ColRef{Idx: 0, Name: "v", T: types.Int8}
	minus, err := expr.Binary("-", v, &expr.Const{D: types.NewInt(4), T: types.Int8})
	if err != nil {
		t.Fatal(err)
	}
	div, err := expr.Binary("/", &expr.Const{D: types.NewInt(10), T: types.Int8}, minus)
	if err != nil {
		t.Fatal(err)
	}
	project := func() plan.Node {
		return &plan.Project{Input: &plan.Scan{Object: d, Cols: cols}, Exprs: []expr.Expr{div}, Cols: []types.Column{{Name: "q", Type: types.Int8}}}
	}
	run := func(n plan.Node) (string, error) {
		var got []string
		err := StreamBatch(context.Background(), n, st.DB(), func(r types.Row) error {
			got = append(got, fmt.Sprint(r[0].I))
			return nil
		})
		return strings.Join(got, ","), err
	}
	got, err := run(&plan.Limit{Input: project(), Count: 3})
	if err != nil || got != "-3,-5,-10" {
		t.Fatalf("LIMIT 3: got %q, %v; want -3,-5,-10", got, err)
	}
	// A LIMIT inside a UNION ALL under another LIMIT: each stops its own
	// input only.
	inner := &plan.Limit{Input: project(), Count: 2}
	outer := &plan.Limit{Input: &plan.Union{Inputs: []plan.Node{inner, &plan.Limit{Input: project(), Count: 3}}}, Count: 4}
	if got, err := run(outer); err != nil || got != "-3,-5,-3,-5" {
		t.Fatalf("nested LIMITs: got %q, %v; want -3,-5,-3,-5", got, err)
	}
	if got, err := run(&plan.Limit{Input: project(), Count: 2, Offset: 1}); err != nil || got != "-5,-10" {
		t.Fatalf("LIMIT 2 OFFSET 1: got %q, %v; want -5,-10", got, err)
	}
	if _, err := run(project()); err == nil {
		t.Fatal("the whole projection divided by zero without an error")
	}
	// RunBatch gives the same rows.
	rows, err := RunBatch(context.Background(), &plan.Limit{Input: project(), Count: 3}, st.DB())
	if err != nil || len(rows) != 3 {
		t.Fatalf("RunBatch LIMIT 3: %d rows, %v", len(rows), err)
	}
	// An aggregate folds the scan's rows as they come.
	count := &plan.Aggregate{Input: &plan.Scan{Object: d, Cols: cols}, Aggs: []plan.AggCall{{Func: "count", T: types.Int8}}}
	rows, err = RunBatch(context.Background(), count, st.DB())
	if err != nil || len(rows) != 1 || rows[0][0].I != 1000 {
		t.Fatalf("count(*): %v, %v; want 1000", rows, err)
	}
}
