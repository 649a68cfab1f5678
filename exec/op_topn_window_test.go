package exec

import (
	"testing"

	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestTopNFreesClosedWindows: a top-N whose partition column is a window
// start frees the partitions whose window the watermark closed, from
// memory and from Pebble (counted by the keys under its prefix), keeps
// the rows it emitted, and after a restart indexes the open partitions
// it reads back so that they are freed too.
func TestTopNFreesClosedWindows(t *testing.T) {
	store := memoryStore(t)
	prefix := storage.StatePrefix(42, 7)
	tn := testTopN(plan.RowNumber, true, true, 2, 0)
	out := newCollector(t)
	wm := &watermarkState{}
	open := func() *topNOp {
		op, err := newTopNOp(tn, true, prefix, store, topNConfig{}, out)
		if err != nil {
			t.Fatal(err)
		}
		// Column 0 is the window's start; windows last 10.
		op.closeWindowsBy(&windowCloser{st: wm, keyCol: 0, offset: 10})
		return op
	}
	keys := func() int {
		n := 0
		if err := storage.ScanPrefix(store.DB(), prefix, func(k, v []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	op := open()
	epoch := uint64(0)
	step := func(watermark int64, rows ...types.Row) {
		t.Helper()
		ch := &Chunk{}
		for _, r := range rows {
			ch.Append(r, Insert)
		}
		if err := op.Push(ch); err != nil {
			t.Fatal(err)
		}
		wm.value.Store(watermark)
		wm.valid.Store(true)
		epoch++
		b := store.NewBatch()
		if err := op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(b, false); err != nil {
			t.Fatal(err)
		}
	}
	row := func(start, k int64) types.Row {
		return types.Row{types.NewInt(start), types.NewInt(k), types.NewInt(0)}
	}
	step(0, row(0, 1), row(0, 2), row(10, 3), row(20, 4))
	if n := keys(); n != 4 || len(op.parts) != 3 {
		t.Fatalf("before any window closed: %d keys, %d partitions; want 4, 3", n, len(op.parts))
	}
	step(10) // window [0, 10) closes
	if n := keys(); n != 2 || len(op.parts) != 2 {
		t.Fatalf("after window 0 closed: %d keys, %d partitions; want 2, 2", n, len(op.parts))
	}
	op = open()
	step(30, row(30, 5)) // windows 10 and 20 close; 30 is open
	if n := keys(); n != 1 || len(op.parts) != 1 {
		t.Fatalf("after a restart and windows 10, 20 closed: %d keys, %d partitions; want 1, 1", n, len(op.parts))
	}
	if got := len(out.sorted()); got != 5 {
		t.Fatalf("the view holds %d ranked rows, want all 5: freeing a window must not retract its rows", got)
	}
}
