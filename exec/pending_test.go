package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"streamdb/types"
)

// TestPendingWrites checks pendingWrites against a map model over random
// sets and deletes of a few keys, across several epochs of one Pebble DB.
func TestPendingWrites(t *testing.T) {
	seed := int64(7)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	prefix := []byte("p/")
	model := map[string]string{}
	var p pendingWrites
	for epoch := 0; epoch < 50; epoch++ {
		for n := rng.Intn(300); n > 0; n-- {
			k := fmt.Sprintf("k%03d", rng.Intn(40))
			if rng.Intn(3) == 0 {
				p.del([]byte(k))
				delete(model, k)
			} else {
				row := types.Row{types.NewInt(rng.Int63n(1000)), types.NewString(k)}
				cnt := uint64(rng.Intn(5) + 1)
				p.set([]byte(k), row, cnt)
				model[k] = string(EncodeViewValue(row, cnt))
			}
		}
		// Keys written once per epoch (append-only row ids), in ascending
		// order in even epochs and scrambled in odd ones.
		perm := rng.Perm(rng.Intn(20))
		for j := range perm {
			id := j
			if epoch%2 == 1 {
				id = perm[j]
			}
			k := fmt.Sprintf("u%03d-%03d", epoch, id)
			row := types.Row{types.NewInt(int64(id))}
			p.setNew([]byte(k), row, 1)
			model[k] = string(EncodeViewValue(row, 1))
		}
		b := db.NewBatch()
		if err := p.writeTo(b, prefix); err != nil {
			t.Fatal(err)
		}
		// writeTo emits in key order (what the memtable inserts fastest).
		r := b.Reader()
		var prev []byte
		for {
			_, k, _, ok, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if prev != nil && string(k) <= string(prev) {
				t.Fatalf("epoch %d: batch writes %q after %q", epoch, k, prev)
			}
			prev = append(prev[:0], k...)
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		it, _ := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: []byte("p0")})
		got := map[string]string{}
		last := ""
		for it.First(); it.Valid(); it.Next() {
			k := string(it.Key()[len(prefix):])
			if k <= last && last != "" {
				t.Fatalf("keys out of order")
			}
			last = k
			got[k] = string(it.Value())
		}
		it.Close()
		if len(got) != len(model) {
			t.Fatalf("epoch %d: %d keys stored, model has %d", epoch, len(got), len(model))
		}
		for k, v := range model {
			if got[k] != v {
				t.Fatalf("epoch %d: key %s = %x, want %x", epoch, k, got[k], v)
			}
		}
	}
}
