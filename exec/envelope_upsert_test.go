package exec

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
	"streamdb/types"
)

// TestUpsertOpRetractsCurrentRows: random upserts, tombstones and
// truncates through upsertOp into a keyed materialize whose epochs
// Pebble commits two epochs late (as the runtime may): the changes it
// sends, applied in order, never retract a row that is not there and
// always equal the rows the messages say; a new upsertOp over the
// committed state (a restart) carries on from it.
func TestUpsertOpRetractsCurrentRows(t *testing.T) {
	const seed = 41
	rng := rand.New(rand.NewSource(seed))
	st := memoryStore(t)
	cols := []types.Column{{Name: "k", Type: types.Int4}, {Name: "v", Type: types.Int4}}
	prefix := storage.StatePrefix(7, 0)
	var committed uint64
	var pending []*pebble.Batch // closed epochs not committed yet, oldest first
	commitOldest := func() {
		if err := st.Commit(pending[0], false); err != nil {
			t.Fatal(err)
		}
		pending = pending[1:]
		committed++
	}
	out := &textRows{cols: cols}
	newOps := func() *upsertOp {
		mat, err := newMaterializeOp(Keyed, []int{0}, prefix, storage.StatePrefix(7, 1), st, groupLimit{})
		if err != nil {
			t.Fatal(err)
		}
		return newUpsertOp([]int{0}, 2, prefix, st, func() uint64 { return committed }, &teeOp{outputs: []Operator{out, mat}})
	}
	op := newOps()
	want := map[int64]int64{}
	have := map[string]int{} // the rows the changes sent make
	epoch := uint64(0)
	for step := range 3000 {
		c := &Chunk{}
		for range rng.Intn(8) {
			k := int64(rng.Intn(12))
			switch r := rng.Intn(40); {
			case r == 0:
				c.Append(types.Row{}, Delete)
				clear(want)
			case r < 12:
				c.Append(types.Row{types.NewInt(k), types.Null}, Delete)
				delete(want, k)
			default:
				v := int64(rng.Intn(4))
				c.Append(types.Row{types.NewInt(k), types.NewInt(v)}, Insert)
				want[k] = v
			}
		}
		out.rows = out.rows[:0]
		if err := op.Push(c); err != nil {
			t.Fatal(err)
		}
		for _, r := range out.rows {
			if r[0] == '+' {
				have[r[1:]]++
			} else if have[r[1:]]--; have[r[1:]] < 0 {
				t.Fatalf("seed %d step %d: retracted %s, which is not there", seed, step, r[1:])
			}
		}
		epoch++
		b := st.NewBatch()
		if err := op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		pending = append(pending, b)
		for len(pending) > 2 {
			commitOldest()
		}
		var got, exp []string
		for r, n := range have {
			for range n {
				got = append(got, r)
			}
		}
		for k, v := range want {
			exp = append(exp, fmt.Sprint([]string{fmt.Sprint(k), fmt.Sprint(v)}))
		}
		sort.Strings(got)
		sort.Strings(exp)
		if strings.Join(got, " ") != strings.Join(exp, " ") {
			t.Fatalf("seed %d step %d: the changes make %v, want %v", seed, step, got, exp)
		}
		if step%500 == 499 { // a restart from the committed state
			for len(pending) > 0 {
				commitOldest()
			}
			op = newOps()
		}
	}
}
