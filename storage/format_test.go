package storage

import (
	"testing"

	"streamdb/catalog"
)

func TestRatchetFormat(t *testing.T) {
	s, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok, err := s.Format(); ok || err != nil {
		t.Fatalf("new store: format recorded (%v)", err)
	}
	for _, v := range []catalog.FormatVersion{3, 5, 4} {
		b := s.NewBatch()
		if err := s.RatchetFormat(b, v); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(b, false); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	if v, ok, err := s.Format(); !ok || err != nil || v != 5 {
		t.Fatalf("format %d, %v, %v; want 5 (the newest ratcheted)", v, ok, err)
	}
	b := s.NewBatch()
	if err := s.RatchetFormat(b, catalog.DataflowLatest+1); err != nil {
		t.Fatal(err)
	}
	s.Commit(b, false)
	b.Close()
	if err := s.CheckDirFormat(); err == nil {
		t.Fatal("a directory of a newer format opened")
	}
}
