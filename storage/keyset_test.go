package storage

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestKeySets adds keys in a shuffled order, past the memory limit so
// that most of them live in the sets' database, and checks membership of
// every key added and of keys never added, per set.
func TestKeySets(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const seed = 7
	r := rand.New(rand.NewSource(seed))
	ks := s.NewKeySets(2)
	ks.limit = 4 << 10
	order := r.Perm(20000)
	for j, n := range order {
		if err := ks.Add(n%2, []byte(fmt.Sprintf("k%06d", n))); err != nil {
			t.Fatal(err)
		}
		if j == 1000 && ks.db == nil {
			t.Fatalf("seed %d: no spill after 1000 keys over a 4 KiB limit", seed)
		}
	}
	for n := range 20000 {
		for set := range 2 {
			has, err := ks.Has(set, []byte(fmt.Sprintf("k%06d", n)))
			if err != nil {
				t.Fatal(err)
			}
			if want := n%2 == set; has != want {
				t.Fatalf("seed %d: set %d has k%06d = %v, want %v", seed, set, n, has, want)
			}
		}
	}
	for _, k := range []string{"k", "k020000", "a", "z", "k00001"} {
		if has, _ := ks.Has(0, []byte(k)); has {
			t.Fatalf("set 0 has %q, never added", k)
		}
	}
	spilled := ks.dir
	ks.Close()
	if _, err := os.Stat(spilled); !os.IsNotExist(err) {
		t.Fatalf("key set directory %s left after Close: %v", spilled, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "keyset-*")); len(m) != 0 {
		t.Fatalf("left: %v", m)
	}
}
