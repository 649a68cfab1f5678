package storage

import (
	"os"
	"path/filepath"
	"testing"
)

func TestScratchStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc, err := s.OpenScratch()
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "scratch-*")); len(m) != 1 {
		t.Fatalf("scratch directories under the store: %v", m)
	}
	err = sc.Write(func(set func(k, v []byte), del func(k []byte)) {
		for _, k := range []string{"a1", "a2", "a3", "b1"} {
			set([]byte(k), []byte("v"+k))
		}
		del([]byte("a2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	scan := func(reverse bool) []string {
		var got []string
		err := sc.Scan([]byte("a"), []byte("b"), reverse, func(k, v []byte) (bool, error) {
			got = append(got, string(k)+"="+string(v))
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := scan(false); len(got) != 2 || got[0] != "a1=va1" || got[1] != "a3=va3" {
		t.Fatalf("scan: %v", got)
	}
	if got := scan(true); len(got) != 2 || got[0] != "a3=va3" {
		t.Fatalf("reverse scan: %v", got)
	}
	if err := sc.DeleteRange([]byte("a"), []byte("a4")); err != nil {
		t.Fatal(err)
	}
	if got := scan(false); len(got) != 0 {
		t.Fatalf("after DeleteRange: %v", got)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "scratch-*")); len(m) != 0 {
		t.Fatalf("Close left %v", m)
	}
}

// TestStaleScratchRemovedAtOpen: a scratch store a crash left behind is
// removed when the store opens.
func TestStaleScratchRemovedAtOpen(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "scratch-123")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a stale scratch store is still there: %v", err)
	}
}
