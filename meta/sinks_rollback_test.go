package meta

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/storage"
	"streamdb/types"
)

// TestSinksRollback: across a rollback a started sink keeps its outbox
// and gets one entry after it with the changes that turn the view's rows
// into the point's rows; a sink not yet started is left as the point
// has it, and one the point holds that was dropped since is deleted.
func TestSinksRollback(t *testing.T) {
	store, err := storage.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	view := &catalog.Descriptor{ID: 5, Name: "v", Kind: catalog.KindView,
		Columns: []catalog.Column{{Name: "k", Type: "bigint"}, {Name: "s", Type: "text"}}}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	kept := &storage.SinkDescriptor{ID: 10, Name: "kept", CreatedAt: at, View: "v", ViewID: view.ID, Subject: "out.kept"}
	fresh := &storage.SinkDescriptor{ID: 11, Name: "fresh", CreatedAt: at, View: "v", ViewID: view.ID, Subject: "out.fresh"}
	dropped := &storage.SinkDescriptor{ID: 12, Name: "dropped", CreatedAt: at, View: "v", ViewID: view.ID, Subject: "out.dropped"}
	row := func(k int64, s string) types.Row { return types.Row{types.NewInt(k), types.NewString(s)} }
	write := func(fn func(set func(k, v []byte))) {
		t.Helper()
		b := store.NewBatch()
		defer b.Close()
		fn(func(k, v []byte) {
			if err := b.Set(k, v, nil); err != nil {
				t.Fatal(err)
			}
		})
		if err := store.Commit(b, true); err != nil {
			t.Fatal(err)
		}
	}
	// rows replaces the view's rows.
	rows := func(rs ...types.Row) {
		t.Helper()
		b := store.NewBatch()
		defer b.Close()
		pre := exec.ViewTablePrefix(view.ID)
		if err := b.DeleteRange(pre, storage.PrefixEnd(pre), nil); err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			if err := b.Set(append(bytes.Clone(pre), byte(i)), exec.EncodeViewValue(r, 1), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := store.Commit(b, true); err != nil {
			t.Fatal(err)
		}
	}
	outbox := func(d *storage.SinkDescriptor) map[string]string {
		t.Helper()
		out := map[string]string{}
		if err := storage.ScanPrefix(store.DB(), storage.SinkPrefix(d.ID), func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}

	// Now: the view holds rows 1 and 3; kept started and has two
	// entries pending; fresh was created after the point.
	b := store.NewBatch()
	for _, d := range []*storage.SinkDescriptor{kept, fresh} {
		if err := storage.PutSink(b, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := storage.PutDescriptor(b, view); err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(b, true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rows(row(1, "a"), row(3, "c"))
	e7 := exec.EncodeOutboxChanges([]exec.RowDiff{{Row: row(3, "c"), Diff: 1}})
	write(func(set func(k, v []byte)) {
		set(storage.SinkStartedKey(kept.ID), nil)
		set(storage.OutboxKey(kept.ID, 6, storage.OutboxEpoch), nil)
		set(storage.OutboxKey(kept.ID, 7, storage.OutboxEpoch), e7)
	})
	before := outbox(kept)
	carry, err := CaptureSinks(store)
	if err != nil {
		t.Fatal(err)
	}

	// The point's state: rows 1 and 2, kept with another outbox, fresh
	// unknown, dropped there.
	b = store.NewBatch()
	if err := storage.DeleteSink(b, fresh); err != nil {
		t.Fatal(err)
	}
	if err := storage.DeleteSink(b, kept); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*storage.SinkDescriptor{kept, dropped} {
		if err := storage.PutSink(b, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Commit(b, true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rows(row(1, "a"), row(2, "b"))
	write(func(set func(k, v []byte)) {
		set(storage.SinkStartedKey(kept.ID), nil)
		set(storage.OutboxKey(kept.ID, 2, storage.OutboxEpoch), []byte("old"))
		set(storage.SinkStartedKey(dropped.ID), nil)
		set(storage.OutboxKey(dropped.ID, 2, storage.OutboxEpoch), nil)
	})

	if err := carry.Restore(store, 9); err != nil {
		t.Fatal(err)
	}
	all, err := storage.Sinks(store.DB())
	if err != nil {
		t.Fatal(err)
	}
	if got := sinkNames(all); !reflect.DeepEqual(got, []string{"kept"}) {
		t.Fatalf("sinks after the rollback: %v, want [kept]", got)
	}
	if left := outbox(dropped); len(left) != 0 {
		t.Errorf("dropped sink's keys left after the rollback: %d", len(left))
	}
	after := outbox(kept)
	comp := storage.OutboxKey(kept.ID, 10, storage.OutboxRollback)
	v, ok := after[string(comp)]
	if !ok {
		t.Fatalf("no compensating entry before epoch 10 in kept's outbox %q", after)
	}
	delete(after, string(comp))
	if !reflect.DeepEqual(after, before) {
		t.Errorf("kept's outbox after the rollback %q, want it as before %q", after, before)
	}
	diffs, err := exec.DecodeOutboxChanges([]byte(v), 2)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, d := range diffs {
		got[fmt.Sprintf("(%d,%s)", d.Row[0].I, d.Row[1].S)] += d.Diff
	}
	want := map[string]int64{"(2,b)": 1, "(3,c)": -1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compensating changes %v, want %v", got, want)
	}
}
