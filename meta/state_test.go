package meta

import (
	"path/filepath"
	"testing"

	"streamdb/catalog"
	"streamdb/storage"
)

// TestStatePositions: StartPositions stores the positions given (none for
// 0), MovePositions sets the sequence of the sources listed and keeps
// their skipped counts, and a snapshot reads what was committed when it
// was taken.
func TestStatePositions(t *testing.T) {
	st, _ := openCatalogStore(t, filepath.Join(t.TempDir(), "state"))
	defer st.Close()
	s := NewState(st)
	if err := s.StartPositions(7, map[uint16]uint64{0: 10, 1: 0, 2: 30}); err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	if err := storage.PutPosition(b, 7, 2, storage.SourcePosition{Seq: 30, Skipped: 4}); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(b, true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	snap := s.Snapshot()
	defer snap.Close()
	if err := s.MovePositions(7, []uint16{1, 2}, 99); err != nil {
		t.Fatal(err)
	}
	want := map[uint16]SourcePosition{0: {Seq: 10}, 1: {Seq: 99}, 2: {Seq: 99, Skipped: 4}}
	for i, w := range want {
		got, err := s.Position(7, i)
		if err != nil || got != w {
			t.Errorf("source %d: position %+v, %v; want %+v", i, got, err, w)
		}
	}
	before := map[uint16]SourcePosition{0: {Seq: 10}, 1: {}, 2: {Seq: 30, Skipped: 4}}
	for i, w := range before {
		got, err := PositionAt(snap, 7, i)
		if err != nil || got != w {
			t.Errorf("source %d in the snapshot: position %+v, %v; want %+v", i, got, err, w)
		}
	}
}

// TestStateSizes: Sizes counts the keys and bytes of each state table of
// one object, and no other object's.
func TestStateSizes(t *testing.T) {
	st, _ := openCatalogStore(t, filepath.Join(t.TempDir(), "state"))
	defer st.Close()
	b := st.NewBatch()
	put := func(obj uint32, table uint16, key, value string) {
		k := append(storage.StatePrefix(obj, table), key...)
		if err := b.Set(k, []byte(value), nil); err != nil {
			t.Fatal(err)
		}
	}
	put(3, 0, "a", "1")
	put(3, 0, "b", "22")
	put(3, 2, "c", "333")
	put(4, 0, "d", "4")
	if err := st.Commit(b, true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	got := NewState(st).Sizes(3)
	keyLen := int64(len(storage.StatePrefix(3, 0)) + 1)
	want := []StateSize{
		{Table: 0, Keys: 2, Bytes: 2*keyLen + 3, Exact: true},
		{Table: 2, Keys: 1, Bytes: keyLen + 3, Exact: true},
	}
	if len(got) != len(want) {
		t.Fatalf("sizes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("state table %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := NewState(st).Sizes(5); len(got) != 0 {
		t.Errorf("an object with no state has sizes %+v", got)
	}
}

// TestCatalogRename: Rename stores the renamed object and the objects
// naming it, and leaves no record under the old name.
func TestCatalogRename(t *testing.T) {
	st, c := openCatalogStore(t, filepath.Join(t.TempDir(), "state"))
	defer st.Close()
	tbl := &catalog.Descriptor{Name: "t", Kind: catalog.KindTable}
	view := &catalog.Descriptor{Name: "v", Kind: catalog.KindView, DependsOn: []string{"t"}}
	for _, d := range []*catalog.Descriptor{tbl, view} {
		if err := c.Create(d); err != nil {
			t.Fatal(err)
		}
	}
	renamed, v2 := *tbl, *view
	renamed.Name, v2.DependsOn = "u", []string{"u"}
	if err := c.Rename("t", &renamed, &v2); err != nil {
		t.Fatal(err)
	}
	got := storedNames(t, st)
	if _, ok := got["t"]; ok {
		t.Error("the old name is still stored")
	}
	if d, ok := got["u"]; !ok || d.ID != tbl.ID {
		t.Errorf("renamed table: %+v, %v; want id %d", d, ok, tbl.ID)
	}
	if d := got["v"]; d == nil || len(d.DependsOn) != 1 || d.DependsOn[0] != "u" {
		t.Errorf("the view naming it: %+v", d)
	}
}
