package exec

import (
	"log/slog"
	"testing"
	"time"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestAttachOnlyOnceStarted creates views that read a running view while
// barriers are injected between the new pipeline's registration and its
// start (as a busy machine's barrier ticker may). Attached at such a
// barrier e before it was in the runtime's pipelines, the view would not
// be enrolled in epoch e+1 while its edge brings it barrier e+1: it would
// take e+1 for its first epoch, whose batch, with the upstream's rows in
// it, the runtime drops, and the view would stay without its starting
// rows. Each view must hold the upstream's rows once it is attached.
func TestAttachOnlyOnceStarted(t *testing.T) {
	store := memoryStore(t)
	rt := NewRuntime(store, nil, slog.New(slog.DiscardHandler), time.Hour)
	t.Cleanup(rt.Close)
	rt.StartDeferred() // pipelines start as they are added; the test injects barriers
	cols := []types.Column{{Name: "x", Type: types.Int4}}
	var rows [][]expr.Expr
	for i := range 3 {
		rows = append(rows, []expr.Expr{&expr.Const{D: types.NewInt(int64(i)), T: types.Int4}})
	}
	up := &catalog.Descriptor{ID: 1, Name: "up", Kind: catalog.KindView, Dataflow: catalog.DataflowLatest}
	values := &plan.Values{Cols: cols, Rows: rows}
	if _, err := RecordStateLayout(up, values, nil); err != nil {
		t.Fatal(err)
	}
	if err := rt.StartView(up, values, nil); err != nil {
		t.Fatal(err)
	}
	// until runs barriers until done holds.
	until := func(what string, done func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !done() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within a minute (committed epoch %d)", what, rt.CommittedEpoch())
			}
			rt.injectBarrier()
			time.Sleep(time.Millisecond)
		}
	}
	stored := func(id uint32) int {
		n := 0
		if err := storage.ScanPrefix(store.DB(), ViewTablePrefix(id), func(_, _ []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	until("rows in the upstream view", func() bool { return stored(up.ID) == len(rows) })

	joining := func(id uint32) bool {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.joiningLocked(id)
	}
	registeredHook = func(id uint32) {
		// Inject until the registered view attaches (it must not: it
		// has not started) or enough barriers have passed, then one more.
		for range 50 {
			if !joining(id) {
				break
			}
			rt.injectBarrier()
		}
		rt.injectBarrier()
	}
	t.Cleanup(func() { registeredHook = nil })
	const views = 10
	for id := uint32(2); id < 2+views; id++ {
		d := &catalog.Descriptor{ID: id, Name: "down", Kind: catalog.KindView, Dataflow: catalog.DataflowLatest}
		if err := rt.StartView(d, &plan.Scan{Object: up, Cols: cols}, nil); err != nil {
			t.Fatal(err)
		}
		until("attach", func() bool { return !rt.Attaching(id) })
		if n := stored(id); n != len(rows) {
			t.Fatalf("view %d holds %d rows once attached, want the upstream's %d", id, n, len(rows))
		}
	}
}
