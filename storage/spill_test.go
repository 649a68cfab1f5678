package storage

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
)

// spillModel applies writes in order to a map, as Pebble would.
type spillWrite struct {
	key string
	val string
	del bool
}

func writeRun(t *testing.T, sp *Spill, ws []spillWrite) {
	t.Helper()
	rw, err := sp.NewRun()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := rw.Add([]byte(w.key), []byte(w.val), w.del); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.Finish(rw); err != nil {
		t.Fatal(err)
	}
}

func storeContents(t *testing.T, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := ScanPrefix(s.DB(), []byte{'s'}, func(k, v []byte) error {
		out[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCommitSpilled: runs and the batch land as one commit, the newest
// write of every key winning (a later run over an earlier one, the batch
// over every run, a deletion over an older value and over committed
// state), and nothing of them is visible before the commit.
func TestCommitSpilled(t *testing.T) {
	for _, memory := range []bool{false, true} {
		t.Run(fmt.Sprintf("memory=%v", memory), func(t *testing.T) {
			seed := int64(7)
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewSource(seed))
			var s *Store
			var err error
			if memory {
				s, err = OpenMemory()
			} else {
				s, err = Open(t.TempDir())
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			key := func(i int) string { return fmt.Sprintf("s%06d", i) }
			model := map[string]string{}
			// Committed state before the epoch.
			b0 := s.NewBatch()
			for i := 0; i < 500; i++ {
				b0.Set([]byte(key(i)), []byte("old"), nil)
				model[key(i)] = "old"
			}
			if err := s.Commit(b0, false); err != nil {
				t.Fatal(err)
			}
			before := storeContents(t, s)
			apply := func(ws []spillWrite) {
				for _, w := range ws {
					if w.del {
						delete(model, w.key)
					} else {
						model[w.key] = w.val
					}
				}
			}
			sp, err := s.NewSpill()
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			for r := 0; r < 5; r++ {
				var ws []spillWrite
				for i := 0; i < 1000; i++ {
					if rng.Intn(3) == 0 {
						continue
					}
					w := spillWrite{key: key(i), val: fmt.Sprintf("r%d-%d", r, i)}
					if rng.Intn(5) == 0 {
						w = spillWrite{key: key(i), del: true}
					}
					ws = append(ws, w)
				}
				writeRun(t, sp, ws)
				apply(ws)
			}
			if got := storeContents(t, s); len(got) != len(before) {
				t.Fatalf("spilled runs are visible before the commit: %d keys, want %d", len(got), len(before))
			}
			b := s.NewBatch()
			var ws []spillWrite
			for j := 0; j < 300; j++ {
				i := rng.Intn(1200)
				w := spillWrite{key: key(i), val: fmt.Sprintf("b-%d", j)}
				if rng.Intn(4) == 0 {
					w = spillWrite{key: key(i), del: true}
				}
				if w.del {
					b.Delete([]byte(w.key), nil)
				} else {
					b.Set([]byte(w.key), []byte(w.val), nil)
				}
				ws = append(ws, w)
			}
			apply(ws)
			if err := s.CommitSpilled(b, []*Spill{sp}); err != nil {
				t.Fatal(err)
			}
			got := storeContents(t, s)
			if len(got) != len(model) {
				t.Errorf("%d keys after the commit, want %d", len(got), len(model))
			}
			for k, v := range model {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestCommitSpilledRangeDelete: a batch with a range deletion still
// commits whole, the runs first.
func TestCommitSpilledRangeDelete(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp, err := s.NewSpill()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	writeRun(t, sp, []spillWrite{{key: "sa", val: "1"}, {key: "sb", val: "2"}, {key: "sc", val: "3"}})
	b := s.NewBatch()
	b.DeleteRange([]byte("sb"), []byte("sc"), nil)
	b.Set([]byte("sd"), []byte("4"), nil)
	if err := s.CommitSpilled(b, []*Spill{sp}); err != nil {
		t.Fatal(err)
	}
	got := storeContents(t, s)
	want := map[string]string{"sa": "1", "sc": "3", "sd": "4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestCommitSpilledBottomLevel: the spilled rows of a state table whose
// keys lie past everything stored go to the bottom level as they are,
// though the epoch's batch also writes other keys (its epoch record, an
// older table's state) that overlap what is stored: none of them needs a
// compaction to get there.
func TestCommitSpilledBottomLevel(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Objects 1 and 2 hold state, compacted to the bottom level.
	b0 := s.NewBatch()
	for obj := uint32(1); obj <= 2; obj++ {
		for i := 0; i < 1000; i++ {
			b0.Set(append(StatePrefix(obj, 0), fmt.Sprintf("%06d", i)...), []byte("old"), nil)
		}
	}
	if err := s.Commit(b0, false); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().Compact(context.Background(), []byte{prefixState}, PrefixEnd([]byte{prefixState}), false); err != nil {
		t.Fatal(err)
	}
	// An epoch writes object 3 (new) in a spill, and one row of object 1
	// and a key of another kind in its batch.
	sp, err := s.NewSpill()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var ws []spillWrite
	for i := 0; i < 5000; i++ {
		ws = append(ws, spillWrite{key: string(StatePrefix(3, 0)) + fmt.Sprintf("%06d", i), val: "new"})
	}
	writeRun(t, sp, ws)
	b := s.NewBatch()
	b.Set(append(StatePrefix(1, 0), "000500"...), []byte("changed"), nil)
	b.Set([]byte("e-epoch"), []byte("1"), nil)
	if err := s.CommitSpilled(b, []*Spill{sp}); err != nil {
		t.Fatal(err)
	}
	got := storeContents(t, s)
	if len(got) != 7000 || got[string(StatePrefix(1, 0))+"000500"] != "changed" || got[string(StatePrefix(3, 0))+"004999"] != "new" {
		t.Fatalf("after the commit: %d keys, object 1 row 500 %q, object 3 row 4999 %q", len(got),
			got[string(StatePrefix(1, 0))+"000500"], got[string(StatePrefix(3, 0))+"004999"])
	}
	m := s.DB().Metrics()
	bottom := len(m.Levels) - 1
	if m.Levels[bottom].TablesIngested == 0 {
		var where []string
		for l := range m.Levels {
			if n := m.Levels[l].TablesIngested; n > 0 {
				where = append(where, fmt.Sprintf("L%d: %d", l, n))
			}
		}
		t.Errorf("no sstable of the spill was ingested into L%d; ingested: %v", bottom, where)
	}
}
