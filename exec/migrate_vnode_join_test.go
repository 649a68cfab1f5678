package exec

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// streamJoinOnK is joinOnK over two streams, so that planTables numbers
// its state table as the builder does.
func streamJoinOnK(kind plan.JoinKind) *plan.Join {
	j := joinOnK(kind)
	for _, in := range []plan.Node{j.Left, j.Right} {
		in.(*plan.Scan).Object = &catalog.Descriptor{Name: "s", Kind: catalog.KindStream}
	}
	return j
}

// TestMigrateJoinVNodes: a join's state of format DataflowVNodeKeys (page
// keys without a vnode), moved by MigrateView to DataflowJoinVNodes, is
// byte for byte the state of a twin join of that format fed the same
// changes, with packed sides and without; a join started on it, with
// every key in memory and with two per side (keys read back from Pebble
// by vnode), emits what its twin emits.
func TestMigrateJoinVNodes(t *testing.T) {
	for pi, packed := range [][2]bool{{false, false}, {true, false}, {true, true}} {
		seed := int64(60 + pi)
		t.Logf("seed %d packed %v", seed, packed)
		rng := rand.New(rand.NewSource(seed))
		st := memoryStore(t)
		j := streamJoinOnK(plan.FullJoin)
		d := &catalog.Descriptor{ID: 42, Name: "v", Kind: catalog.KindView, Dataflow: catalog.DataflowVNodeKeys}
		_, idx, ok := joinTableIndex(d, j, nil)
		if !ok {
			t.Fatal("the join's state table is not known")
		}
		open := func(id uint32, vnodes int, keys int64, out Operator) *joinOp {
			limit := groupLimit{}
			if keys > 0 {
				limit = groupLimit{max: func() int64 { return keys }, committed: func() uint64 { return ^uint64(0) }}
			}
			op, err := newCachedJoinOp(j, storage.StatePrefix(id, idx), st.DB(), joinStateByKey, vnodes, packed, limit, nil, out)
			if err != nil {
				t.Fatalf("seed %d: restore with %d vnodes: %v", seed, vnodes, err)
			}
			return op
		}
		var live [2][]types.Row
		epoch := uint64(0)
		run := func(ops ...*joinOp) {
			epoch++
			for range rng.Intn(8) {
				side, c := randomJoinChange(rng, &live, 40)
				if packed[side] && c.Signs[0] == Delete {
					live[side] = append(live[side], c.Rows[0])
					continue
				}
				for _, op := range ops {
					ch := &Chunk{}
					ch.Append(c.Rows[0], c.Signs[0])
					if err := op.port(side).Push(ch); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, op := range ops {
				closeJoinEpoch(t, op, st, epoch)
			}
		}
		old, twin := open(42, 0, 0, discard{}), open(43, catalog.DefaultVNodes, 0, discard{})
		for range 150 {
			run(old, twin)
		}

		b := st.NewBatch()
		f, err := MigrateView(st, b, d, j, nil)
		if err != nil || f != catalog.DataflowLatest {
			t.Fatalf("seed %d: MigrateView: format %d, %v; want %d", seed, f, err, catalog.DataflowLatest)
		}
		if err := st.Commit(b, false); err != nil {
			t.Fatal(err)
		}
		b.Close()
		got, want := stateEntries(t, st, storage.StatePrefix(42, idx)), stateEntries(t, st, storage.StatePrefix(43, idx))
		if want == "" || got != want {
			t.Fatalf("seed %d: the migrated state\n%s\ndiffers from its twin's\n%s", seed, got, want)
		}

		for _, keys := range []int64{0, 2} {
			gotOut, wantOut := netChanges{}, netChanges{}
			migrated := open(42, catalog.DefaultVNodes, keys, gotOut)
			twin.next = wantOut
			for range 40 {
				run(migrated, twin)
				if fmt.Sprint(gotOut) != fmt.Sprint(wantOut) {
					t.Fatalf("seed %d keys %d, epoch %d: the migrated join emitted\n%v\nits twin\n%v", seed, keys, epoch, gotOut, wantOut)
				}
			}
		}
	}

	// A key of another layout stops the step, and nothing is written.
	st := memoryStore(t)
	bad := storage.StatePrefix(44, 2)
	if err := st.DB().Set(append(append([]byte(nil), bad...), 0, 5, 1), []byte{2, 0}, nil); err != nil {
		t.Fatal(err)
	}
	b := st.DB().NewIndexedBatch()
	defer b.Close()
	if m, ok, err := joinPagesWithVNodes(b, bad, catalog.DefaultVNodes); err != nil || ok || len(m) != 0 {
		t.Fatalf("joinPagesWithVNodes of a bad key: ok %v, %d moves, %v", ok, len(m), err)
	}
}

// TestJoinVNodeSpans: in a join's state of format DataflowJoinVNodes,
// every key of side s whose join key has vnode v lies in
// storage.VNodeSpanIn(table prefix | s, v, v) and in no other vnode's span
// of any side; so the spans of ranges that cover every vnode of a side
// hold each of its keys once, and a key's rows on both sides have one
// vnode.
func TestJoinVNodeSpans(t *testing.T) {
	const seed = 64
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	st := memoryStore(t)
	j := joinOnK(plan.FullJoin)
	prefix := storage.StatePrefix(45, firstOperatorIndex)
	op, err := newCachedJoinOp(j, prefix, st.DB(), joinStateByKey, catalog.DefaultVNodes, [2]bool{true, false}, groupLimit{}, nil, discard{})
	if err != nil {
		t.Fatal(err)
	}
	var live [2][]types.Row
	for epoch := uint64(1); epoch <= 100; epoch++ {
		for range 30 {
			side, c := randomJoinChange(rng, &live, 3000)
			if side == 0 && c.Signs[0] == Delete {
				live[0] = append(live[0], c.Rows[0])
				continue
			}
			if err := op.port(side).Push(c); err != nil {
				t.Fatal(err)
			}
		}
		closeJoinEpoch(t, op, st, epoch)
	}

	// Each stored key's side and vnode, checked against its join key.
	var keys [2]map[uint16]int
	keyVNode := map[string]uint16{}
	total := 0
	err = storage.ScanPrefix(st.DB(), prefix, func(k, _ []byte) error {
		rest := k[len(prefix):]
		side := rest[0]
		vn := binary.BigEndian.Uint16(rest[1:])
		jk, _, err := readLenPrefixed(rest[1+storage.VNodeLen:])
		if err != nil {
			return err
		}
		if want := storage.VNodeOf(jk, catalog.DefaultVNodes); vn != want {
			return fmt.Errorf("key %x carries vnode %d, its join key's is %d", k, vn, want)
		}
		if other, ok := keyVNode[string(jk)]; ok && other != vn {
			return fmt.Errorf("join key %x has vnodes %d and %d", jk, vn, other)
		}
		keyVNode[string(jk)] = vn
		if keys[side] == nil {
			keys[side] = map[uint16]int{}
		}
		keys[side][vn]++
		total++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keyVNode) < 200 || len(keys[0]) < 64 || len(keys[1]) < 64 {
		t.Fatalf("%d join keys over %d and %d vnodes: too few to test", len(keyVNode), len(keys[0]), len(keys[1]))
	}
	count := func(start, end []byte) int {
		t.Helper()
		it, err := st.DB().NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		n := 0
		for valid := it.First(); valid; valid = it.Next() {
			n++
		}
		return n
	}
	spanned := 0
	for side := range byte(2) {
		sidePrefix := append(append([]byte(nil), prefix...), side)
		for vn := range uint16(catalog.DefaultVNodes) {
			if got, want := count(storage.VNodeSpanIn(sidePrefix, vn, vn)), keys[side][vn]; got != want {
				t.Fatalf("side %d vnode %d: its span holds %d keys, the table %d", side, vn, got, want)
			}
		}
		for _, r := range [][2]uint16{{0, 9}, {10, 99}, {100, 254}, {255, 0xffff}} {
			want := 0
			for vn := int(r[0]); vn <= int(min(r[1], catalog.DefaultVNodes-1)); vn++ {
				want += keys[side][uint16(vn)]
			}
			got := count(storage.VNodeSpanIn(sidePrefix, r[0], r[1]))
			if got != want {
				t.Fatalf("side %d vnodes %v: the span holds %d keys, the range %d", side, r, got, want)
			}
			spanned += got
		}
	}
	if spanned != total {
		t.Fatalf("the spans hold %d keys, the table %d", spanned, total)
	}
}
