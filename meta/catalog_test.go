package meta

import (
	"log/slog"
	"path/filepath"
	"testing"

	"streamdb/catalog"
	"streamdb/storage"
)

// openCatalogStore opens a Pebble store in dir and a Catalog over it
// (with no broker: Load is tested in catalog_load_test.go).
func openCatalogStore(t *testing.T, dir string) (*storage.Store, *Catalog) {
	t.Helper()
	st, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st, NewCatalog(CatalogConfig{Store: st, Log: slog.New(slog.DiscardHandler)})
}

// storedNames returns the stored descriptors by name.
func storedNames(t *testing.T, st *storage.Store) map[string]*catalog.Descriptor {
	t.Helper()
	ds, err := storage.Descriptors(st.DB())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*catalog.Descriptor{}
	for _, d := range ds {
		out[d.Name] = d
	}
	return out
}

// TestCatalogWrites: Create hands out ids once, in order, also across a
// reopen; a view raises the directory's state format and Replace leaves it
// alone; Put keeps the id it is given; Replace under a new name leaves no
// record under the old one; Drop removes the descriptor with the object's
// positions and state; Amend's change is read back.
func TestCatalogWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	st, c := openCatalogStore(t, dir)

	s := &catalog.Descriptor{Name: "s", Kind: catalog.KindStream, Subject: "s"}
	v := &catalog.Descriptor{Name: "v", Kind: catalog.KindView, Query: "SELECT 1", Dataflow: catalog.DataflowLatest}
	for _, d := range []*catalog.Descriptor{s, v} {
		if err := c.Create(d); err != nil {
			t.Fatal(err)
		}
	}
	if s.ID != 1 || v.ID != 2 {
		t.Fatalf("ids %d, %d; want 1, 2", s.ID, v.ID)
	}
	if f, ok, err := st.Format(); err != nil || !ok || f != catalog.DataflowLatest {
		t.Fatalf("directory format %d (recorded %v, %v); want %d after a view is created", f, ok, err, catalog.DataflowLatest)
	}

	// The view's state and positions, which Drop must remove.
	b := st.NewBatch()
	if err := b.Set(append(storage.StatePrefix(v.ID, 0), 'k'), []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if err := storage.PutPosition(b, v.ID, 0, storage.SourcePosition{Seq: 7}); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(b, true); err != nil {
		t.Fatal(err)
	}
	b.Close()

	// Renamed in place: same id, one record.
	s2 := *s
	s2.Name, s2.Comment = "s2", "renamed"
	if err := c.Replace(s, &s2); err != nil {
		t.Fatal(err)
	}
	got := storedNames(t, st)
	if _, ok := got["s"]; ok {
		t.Errorf("after Replace to s2, the old name s is still stored")
	}
	if d := got["s2"]; d == nil || d.ID != s.ID || d.Comment != "renamed" {
		t.Errorf("after Replace, s2 is stored as %+v; want id %d with the new comment", d, s.ID)
	}

	if err := c.Drop(v); err != nil {
		t.Fatal(err)
	}
	if _, ok := storedNames(t, st)["v"]; ok {
		t.Errorf("after Drop, v is still stored")
	}
	if p, err := st.Position(v.ID, 0); err != nil || p.Seq != 0 {
		t.Errorf("after Drop, v's position is %+v (%v); want none", p, err)
	}
	n := 0
	if err := storage.ScanPrefix(st.DB(), storage.ObjectStatePrefix(v.ID), func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("after Drop, v has %d state records; want none", n)
	}

	// Put keeps the id given (an unpopulated view put back); Amend's
	// change is read back.
	u := &catalog.Descriptor{Name: "u", Kind: catalog.KindUnpopulatedView, ID: 42, Query: "SELECT 2"}
	if err := c.Put(u); err != nil {
		t.Fatal(err)
	}
	u2 := *u
	u2.Comment = "amended"
	if err := c.Amend(&u2); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, c = openCatalogStore(t, dir)
	defer st.Close()
	got = storedNames(t, st)
	if d := got["u"]; d == nil || d.ID != 42 || d.Comment != "amended" {
		t.Errorf("after a reopen, u is %+v; want id 42, comment amended", d)
	}
	w := &catalog.Descriptor{Name: "w", Kind: catalog.KindTable, Subject: "w"}
	if err := c.Create(w); err != nil {
		t.Fatal(err)
	}
	if w.ID != 3 {
		t.Errorf("after a reopen, Create gave id %d; want 3 (1 and 2 were handed out, dropped or not)", w.ID)
	}
}

// TestCatalogReplaceKeepsFormat: replacing a view's descriptor (a comment)
// does not raise the directory's format, as storing a new view does.
func TestCatalogReplaceKeepsFormat(t *testing.T) {
	st, c := openCatalogStore(t, filepath.Join(t.TempDir(), "state"))
	defer st.Close()
	old := catalog.DataflowMinSupported
	v := &catalog.Descriptor{Name: "v", Kind: catalog.KindView, Query: "SELECT 1", Dataflow: old}
	if err := c.Create(v); err != nil {
		t.Fatal(err)
	}
	nv := *v
	nv.Dataflow = catalog.DataflowLatest
	if err := c.Replace(v, &nv); err != nil {
		t.Fatal(err)
	}
	if f, _, err := st.Format(); err != nil || f != old {
		t.Errorf("directory format %d (%v) after Replace; want %d, as Create left it", f, err, old)
	}
	if err := c.Put(&nv); err != nil {
		t.Fatal(err)
	}
	if f, _, err := st.Format(); err != nil || f != catalog.DataflowLatest {
		t.Errorf("directory format %d (%v) after Put; want %d", f, err, catalog.DataflowLatest)
	}
}

// TestCatalogBatchWrites: NewIDIn, PutIn and DeleteIn write into the
// caller's batch: nothing is stored, and no id handed out, until it
// commits, and then all of it is.
func TestCatalogBatchWrites(t *testing.T) {
	st, c := openCatalogStore(t, filepath.Join(t.TempDir(), "state"))
	defer st.Close()
	old := &catalog.Descriptor{Name: "old", Kind: catalog.KindTable, Subject: "old"}
	if err := c.Create(old); err != nil {
		t.Fatal(err)
	}

	write := func(commit bool) *catalog.Descriptor {
		b := st.NewBatch()
		defer b.Close()
		seq := &catalog.Descriptor{Name: "seq", Kind: catalog.KindSequence}
		id, err := c.NewIDIn(b)
		if err != nil {
			t.Fatal(err)
		}
		seq.ID = id
		renamed := *old
		renamed.Name = "new"
		if err := c.DeleteIn(b, old.Name); err != nil {
			t.Fatal(err)
		}
		if err := c.PutIn(b, seq, &renamed); err != nil {
			t.Fatal(err)
		}
		if got := storedNames(t, st); got["seq"] != nil || got["new"] != nil || got["old"] == nil {
			t.Fatalf("before the batch commits, the catalog holds %v; want only old", got)
		}
		if commit {
			if err := st.Commit(b, true); err != nil {
				t.Fatal(err)
			}
		}
		return seq
	}
	if seq := write(false); seq.ID != 2 {
		t.Fatalf("NewIDIn gave %d; want 2", seq.ID)
	}
	seq := write(true)
	if seq.ID != 2 {
		t.Errorf("NewIDIn gave %d after a batch that did not commit; want 2 again", seq.ID)
	}
	got := storedNames(t, st)
	if got["old"] != nil || got["new"] == nil || got["new"].ID != old.ID || got["seq"] == nil || got["seq"].ID != 2 {
		t.Errorf("after the batch commits, the catalog holds %v; want new (id %d) and seq (id 2)", got, old.ID)
	}
	next := &catalog.Descriptor{Name: "next", Kind: catalog.KindStream, Subject: "next"}
	if err := c.Create(next); err != nil {
		t.Fatal(err)
	}
	if next.ID != 3 {
		t.Errorf("Create after the batch gave id %d; want 3", next.ID)
	}
}
