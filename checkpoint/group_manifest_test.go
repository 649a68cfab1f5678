package checkpoint

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/cluster"
	"streamdb/storage"
)

// groupCatalog is a stream s (id 5) read by view g1 (10, group 1) and a
// table t (6) read by g2a (11), which g2b (12) reads (group 2). Object 13
// is in no group (a dropped view's left-over keys would be).
func groupCatalog() []*catalog.Descriptor {
	return []*catalog.Descriptor{
		{ID: 5, Name: "s", Kind: catalog.KindStream},
		{ID: 6, Name: "t", Kind: catalog.KindTable},
		{ID: 10, Name: "g1", Kind: catalog.KindView, DependsOn: []string{"s"}, Query: "SELECT * FROM s"},
		{ID: 11, Name: "g2a", Kind: catalog.KindView, DependsOn: []string{"t"}, Query: "SELECT * FROM t"},
		{ID: 12, Name: "g2b", Kind: catalog.KindView, DependsOn: []string{"g2a"}, Query: "SELECT * FROM g2a"},
	}
}

// fillObjects writes random state keys, a position per source and the
// epoch for objects ids, with values marked by tag; it returns every key
// written by object.
func fillObjects(t *testing.T, st *storage.Store, rng *rand.Rand, tag string, epoch uint64, ids ...uint32) map[uint32]map[string]string {
	t.Helper()
	out := map[uint32]map[string]string{}
	b := st.NewBatch()
	for _, id := range ids {
		out[id] = map[string]string{}
		for table := uint16(0); table < 3; table++ {
			for range 20 + rng.IntN(40) {
				k := binary.BigEndian.AppendUint64(storage.StatePrefix(id, table), rng.Uint64())
				v := fmt.Sprintf("%s-%d", tag, rng.Uint64())
				if err := b.Set(k, []byte(v), nil); err != nil {
					t.Fatal(err)
				}
				out[id][string(k)] = v
			}
		}
		if err := storage.PutPosition(b, id, 0, storage.SourcePosition{Seq: uint64(id) * 100}); err != nil {
			t.Fatal(err)
		}
	}
	if err := storage.PutEpoch(b, epoch); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(b, true); err != nil {
		t.Fatal(err)
	}
	return out
}

// stateKeys returns every 's' key of st by object id.
func stateKeys(t *testing.T, st *storage.Store) map[uint32]map[string]string {
	t.Helper()
	out := map[uint32]map[string]string{}
	err := storage.ScanPrefix(st.DB(), []byte{'s'}, func(k, v []byte) error {
		id := binary.BigEndian.Uint32(k[1:5])
		if out[id] == nil {
			out[id] = map[string]string{}
		}
		out[id][string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGroupManifests: a checkpoint writes one task manifest per
// view-group and a global manifest; restoring group 2 into another store
// brings exactly group 2's keys and positions and leaves every other key
// there as it was.
func TestGroupManifests(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%t", async), func(t *testing.T) {
			seed := rand.Uint64()
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			h := newCoordHarness(t)
			h.settings.Async = async
			h.settings.ViewGroups = true
			h.c.SetCatalog(groupCatalog)
			h.epochs.cut = Cut{Epoch: 7, Positions: []ViewPosition{
				{ViewID: 10, View: "g1", Stream: "S", Subject: "s"},
				{ViewID: 11, View: "g2a", Stream: "T", Subject: "t"},
			}}
			src := fillObjects(t, h.store, rng, "a", 7, 5, 6, 10, 11, 12, 13)
			m, err := h.c.Take(context.Background(), TriggerManual)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(m.Dir); err != nil {
				t.Fatalf("the checkpoint with its groups does not verify: %v", err)
			}
			data, err := os.ReadFile(filepath.Join(m.Dir, GroupsDir, GlobalManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			global, err := cluster.DecodeGlobalManifest(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(global.Tasks) != 2 || global.Tasks[0].Group != 10 || global.Tasks[1].Group != 11 || global.Epoch != 7 {
				t.Fatalf("global manifest %+v: want groups 10 and 11 at epoch 7", global)
			}
			task, err := ReadGroup(m.Dir, "g2b")
			if err != nil {
				t.Fatal(err)
			}
			if task.Group != 11 || len(task.Views) != 2 || task.Epoch != 7 {
				t.Fatalf("task manifest %+v: want group 11 of g2a and g2b at epoch 7", task)
			}
			if len(task.Cuts) != 1 || task.Cuts[0].View != "g2a" || task.Cuts[0].Seq != 1100 {
				t.Errorf("cuts %+v: want g2a's source at 1100", task.Cuts)
			}
			if err := CheckGroupCatalog(task, groupCatalog()); err != nil {
				t.Fatal(err)
			}

			// Another server's store: its own keys for every object.
			other, err := storage.Open(filepath.Join(t.TempDir(), "b"))
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			dst := fillObjects(t, other, rng, "b", 3, 5, 6, 10, 11, 12, 13)
			if err := RestoreGroup(other, m.Dir, task); err != nil {
				t.Fatal(err)
			}
			got := stateKeys(t, other)
			for _, id := range []uint32{5, 6, 10, 13} {
				if fmt.Sprint(got[id]) != fmt.Sprint(dst[id]) {
					t.Errorf("object %d of another group changed by the restore", id)
				}
			}
			for _, id := range []uint32{11, 12} {
				if fmt.Sprint(got[id]) != fmt.Sprint(src[id]) {
					t.Errorf("object %d: %d keys after the restore, want the checkpoint's %d", id, len(got[id]), len(src[id]))
				}
				pos, err := other.Position(id, 0)
				if err != nil || pos.Seq != uint64(id)*100 {
					t.Errorf("object %d: position %v (%v), want %d", id, pos, err, id*100)
				}
			}

			// Every key of a span file lies in its span, and is a key of the
			// group's objects: restored alone into an empty store, the files
			// bring group 2's keys and nothing else.
			empty, err := storage.Open(filepath.Join(t.TempDir(), "c"))
			if err != nil {
				t.Fatal(err)
			}
			defer empty.Close()
			if err := RestoreGroup(empty, m.Dir, task); err != nil {
				t.Fatal(err)
			}
			it, err := empty.DB().NewIter(&pebble.IterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for it.First(); it.Valid(); it.Next() {
				k := it.Key()
				in := false
				for _, s := range task.Spans {
					in = in || (bytes.Compare(k, s.Start) >= 0 && bytes.Compare(k, s.End) < 0)
				}
				id := binary.BigEndian.Uint32(k[1:5])
				if !in || (id != 11 && id != 12) {
					t.Errorf("key %x restored with group 2: in its spans %t, object %d", k, in, id)
				}
				n++
			}
			it.Close()
			if want := len(src[11]) + len(src[12]) + 2; n != want {
				t.Errorf("%d keys restored into an empty store, want group 2's %d", n, want)
			}
		})
	}
}

// TestGroupRestoreRefusesMismatch: a span file, a task manifest or a
// global manifest that does not match its digest, a checkpoint without
// group manifests, and a catalog whose view differs are refused before
// anything is restored.
func TestGroupRestoreRefusesMismatch(t *testing.T) {
	h := newCoordHarness(t)
	h.settings.ViewGroups = true
	h.c.SetCatalog(groupCatalog)
	rng := rand.New(rand.NewPCG(1, 2))
	fillObjects(t, h.store, rng, "a", 4, 5, 6, 10, 11, 12)
	m, err := h.c.Take(context.Background(), TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	task, err := ReadGroup(m.Dir, "g2a")
	if err != nil {
		t.Fatal(err)
	}
	gdir := filepath.Join(m.Dir, GroupsDir)
	flip := func(t *testing.T, name string) {
		t.Helper()
		path := filepath.Join(gdir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		orig := bytes.Clone(data)
		data[len(data)/2] ^= 0x20
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.WriteFile(path, orig, 0o644) })
	}
	var spanFile string
	for _, s := range task.Spans {
		if s.File != "" {
			spanFile = s.File
		}
	}
	t.Run("span file", func(t *testing.T) {
		flip(t, spanFile)
		if _, err := ReadGroup(m.Dir, "g2a"); !errors.Is(err, ErrGroupDigest) {
			t.Fatalf("a damaged span file: %v, want ErrGroupDigest", err)
		}
	})
	t.Run("task manifest", func(t *testing.T) {
		flip(t, "task-11.json")
		if _, err := ReadGroup(m.Dir, "g2a"); !errors.Is(err, ErrGroupDigest) {
			t.Fatalf("a changed task manifest: %v, want ErrGroupDigest", err)
		}
	})
	t.Run("no global manifest", func(t *testing.T) {
		path := filepath.Join(gdir, GlobalManifestFile)
		data, _ := os.ReadFile(path)
		os.Remove(path)
		t.Cleanup(func() { os.WriteFile(path, data, 0o644) })
		if _, err := ReadGroup(m.Dir, "g2a"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("no global manifest: %v, want ErrNotExist", err)
		}
	})
	t.Run("other view", func(t *testing.T) {
		if _, err := ReadGroup(m.Dir, "nope"); !errors.Is(err, ErrGroupMismatch) {
			t.Fatalf("a view the checkpoint lacks: %v, want ErrGroupMismatch", err)
		}
	})
	t.Run("catalog", func(t *testing.T) {
		descs := groupCatalog()
		descs[4].ID = 14
		if err := CheckGroupCatalog(task, descs); !errors.Is(err, ErrGroupMismatch) {
			t.Errorf("a view of another id: %v, want ErrGroupMismatch", err)
		}
		descs = groupCatalog()
		descs[3].Query = "SELECT 1 FROM t"
		if err := CheckGroupCatalog(task, descs); !errors.Is(err, ErrGroupMismatch) {
			t.Errorf("a view of another definition: %v, want ErrGroupMismatch", err)
		}
		descs = append(groupCatalog(), &catalog.Descriptor{ID: 13, Name: "g2c", Kind: catalog.KindView, DependsOn: []string{"g2b"}})
		if err := CheckGroupCatalog(task, descs); !errors.Is(err, ErrGroupMismatch) {
			t.Errorf("a group with another view: %v, want ErrGroupMismatch", err)
		}
	})
	if _, err := ReadGroup(m.Dir, "g2a"); err != nil {
		t.Fatalf("the restored files read again: %v", err)
	}
}

// TestNoGroupsUnlessAsked: without state.checkpoints.view-groups a
// checkpoint exports nothing beyond its state, even with the catalog.
func TestNoGroupsUnlessAsked(t *testing.T) {
	h := newCoordHarness(t)
	h.c.SetCatalog(groupCatalog)
	fillObjects(t, h.store, rand.New(rand.NewPCG(3, 4)), "a", 2, 10, 11)
	m, err := h.c.Take(context.Background(), TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.Dir, GroupsDir)); !os.IsNotExist(err) {
		t.Errorf("a checkpoint without view-groups asked for has %s: %v", GroupsDir, err)
	}
	if _, err := ReadGroup(m.Dir, "g1"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadGroup of a checkpoint without groups: %v, want ErrNotExist", err)
	}
}
