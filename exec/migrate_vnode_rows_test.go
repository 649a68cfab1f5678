package exec

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// rowVNodeCols are the columns of the views the row vnode tests keep:
// a key, and a text their index is on.
var rowVNodeCols = []types.Column{{Name: "k", Type: types.Int8}, {Name: "s", Type: types.Text}}

// rowVNodeIndex is the index on s the views keep.
var rowVNodeIndex = catalog.Index{Name: "by_s", Columns: []catalog.IndexColumn{{Name: "s"}}, Table: FirstIndexTable, Seq: 1}

// rowVNodeView opens view id's materialize operator in mode, its rows
// keyed with vnodes among vnodes (0: none), with the index on s.
func rowVNodeView(t *testing.T, st *storage.Store, id uint32, mode MaterializeMode, vnodes int) *materializeOp {
	t.Helper()
	var keyCols []int
	if mode == Keyed {
		keyCols = []int{0}
	}
	op, err := newMaterializeOp(mode, keyCols, ViewTablePrefix(id), storage.StatePrefix(id, viewMetaIndex), st, groupLimit{})
	if err != nil {
		t.Fatal(err)
	}
	op.vnodes = vnodes
	d := &catalog.Descriptor{ID: id, Indexes: []catalog.Index{rowVNodeIndex}}
	op.indexes = newIndexWriters(d, rowVNodeCols)
	return op
}

// rowVNodeFeed pushes epochs of random changes (inserts only for an
// append-only view; a keyed view's deletes name stored rows) to ops,
// each epoch committed.
func rowVNodeFeed(t *testing.T, st *storage.Store, rng *rand.Rand, mode MaterializeMode, live *[]types.Row, epoch *uint64, epochs, keys int, ops ...*materializeOp) {
	t.Helper()
	for range epochs {
		c := &Chunk{}
		for range 1 + rng.Intn(30) {
			if mode != AppendOnly && len(*live) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(*live))
				c.Append((*live)[i], Delete)
				*live = append((*live)[:i], (*live)[i+1:]...)
				continue
			}
			k := int64(rng.Intn(keys))
			if mode == Keyed {
				taken := false
				for _, r := range *live {
					taken = taken || r[0].I == k
				}
				if taken {
					continue
				}
			}
			row := types.Row{types.NewInt(k), types.NewString(fmt.Sprintf("s%d", rng.Intn(7)))}
			c.Append(row, Insert)
			*live = append(*live, row)
		}
		*epoch++
		for _, op := range ops {
			cp := &Chunk{Rows: append([]types.Row(nil), c.Rows...), Signs: append([]int8(nil), c.Signs...)}
			if err := op.Push(cp); err != nil {
				t.Fatal(err)
			}
			b := st.NewBatch()
			if err := op.Barrier(Epoch{ID: *epoch, Batch: b}); err != nil {
				t.Fatal(err)
			}
			if err := st.Commit(b, false); err != nil {
				t.Fatal(err)
			}
			b.Close()
		}
	}
}

var rowVNodeModes = []struct {
	name string
	mode MaterializeMode
}{{"keyed", Keyed}, {"append-only", AppendOnly}, {"counted", Counted}}

// TestMigrateViewRowVNodes: a view's rows and index entries of format
// DataflowJoinVNodes (no vnode), moved by MigrateView to
// DataflowViewRowVNodes, are byte for byte those of a twin view of that
// format fed the same changes, in each way a view keeps its rows; a view
// started on them goes on as its twin.
func TestMigrateViewRowVNodes(t *testing.T) {
	for mi, m := range rowVNodeModes {
		t.Run(m.name, func(t *testing.T) {
			seed := int64(70 + mi)
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewSource(seed))
			st := memoryStore(t)
			old, twin := rowVNodeView(t, st, 42, m.mode, 0), rowVNodeView(t, st, 43, m.mode, catalog.DefaultVNodes)
			var live []types.Row
			var epoch uint64
			rowVNodeFeed(t, st, rng, m.mode, &live, &epoch, 60, 300, old, twin)

			d := &catalog.Descriptor{ID: 42, Name: "v", Kind: catalog.KindView, Dataflow: catalog.DataflowJoinVNodes,
				Indexes: []catalog.Index{rowVNodeIndex}}
			b := st.NewBatch()
			f, err := MigrateView(st, b, d, &plan.Values{Cols: rowVNodeCols}, nil)
			if err != nil || f != catalog.DataflowViewRowVNodes {
				t.Fatalf("MigrateView: format %d, %v; want %d", f, err, catalog.DataflowViewRowVNodes)
			}
			if err := st.Commit(b, false); err != nil {
				t.Fatal(err)
			}
			b.Close()
			for _, table := range []uint16{viewTableIndex, FirstIndexTable, viewMetaIndex} {
				got, want := stateEntries(t, st, storage.StatePrefix(42, table)), stateEntries(t, st, storage.StatePrefix(43, table))
				if (want == "") != (table == viewMetaIndex && m.mode != AppendOnly) || got != want {
					t.Fatalf("table %d: the migrated state\n%s\ndiffers from its twin's\n%s", table, got, want)
				}
			}
			migrated := rowVNodeView(t, st, 42, m.mode, catalog.DefaultVNodes)
			rowVNodeFeed(t, st, rng, m.mode, &live, &epoch, 30, 300, migrated, twin)
			for _, table := range []uint16{viewTableIndex, FirstIndexTable} {
				if got, want := stateEntries(t, st, storage.StatePrefix(42, table)), stateEntries(t, st, storage.StatePrefix(43, table)); got != want {
					t.Fatalf("table %d after more changes: the migrated view's state differs from its twin's", table)
				}
			}
		})
	}
}

// TestViewRowVNodeSpans: every row of a view of format
// DataflowViewRowVNodes whose stored key has vnode v lies in
// storage.VNodeSpan(view, 0, v, v), v being the vnode of the key after
// it; ranges of vnodes cover each row once; a point lookup (PinnedKeys)
// and a lookup through the index find each row by its key.
func TestViewRowVNodeSpans(t *testing.T) {
	const seed = 74
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	st := memoryStore(t)
	const id = 44
	op := rowVNodeView(t, st, id, Keyed, catalog.DefaultVNodes)
	var live []types.Row
	var epoch uint64
	rowVNodeFeed(t, st, rng, Keyed, &live, &epoch, 80, 5000, op)

	table := ViewTablePrefix(id)
	perVNode := map[uint16]int{}
	total := 0
	err := storage.ScanPrefix(st.DB(), table, func(k, _ []byte) error {
		vn := binary.BigEndian.Uint16(k[len(table):])
		if want := storage.VNodeOf(k[len(table)+storage.VNodeLen:], catalog.DefaultVNodes); vn != want {
			return fmt.Errorf("row key %x carries vnode %d, its key's is %d", k, vn, want)
		}
		perVNode[vn]++
		total++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(live) || len(perVNode) < 64 {
		t.Fatalf("%d rows stored (%d live) over %d vnodes", total, len(live), len(perVNode))
	}
	count := func(start, end []byte) int {
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
	for vn := range uint16(catalog.DefaultVNodes) {
		if got := count(storage.VNodeSpan(id, viewTableIndex, vn, vn)); got != perVNode[vn] {
			t.Fatalf("vnode %d: its span holds %d rows, the table %d", vn, got, perVNode[vn])
		}
	}
	spanned := 0
	for _, r := range [][2]uint16{{0, 9}, {10, 99}, {100, 254}, {255, 0xffff}} {
		spanned += count(storage.VNodeSpan(id, viewTableIndex, r[0], r[1]))
	}
	if spanned != total {
		t.Fatalf("the spans hold %d rows, the table %d", spanned, total)
	}

	desc := &catalog.Descriptor{ID: id, Name: "v", Kind: catalog.KindView, Dataflow: catalog.DataflowLatest,
		Indexes: []catalog.Index{rowVNodeIndex}}
	scan := &plan.Scan{Object: desc, Cols: rowVNodeCols, StoredKey: []int{0}}
	for _, row := range live[:min(len(live), 50)] {
		for _, col := range []int{0, 1} {
			cond, err := expr.Binary("=", &expr.ColRef{Idx: col, T: rowVNodeCols[col].Type}, &expr.Const{D: row[col], T: rowVNodeCols[col].Type})
			if err != nil {
				t.Fatal(err)
			}
			f := &plan.Filter{Input: scan, Cond: cond}
			lookup := lookupByKey
			if col == 1 {
				lookup = lookupByIndex
			}
			got, ok, err := lookup(f, st.DB())
			if err != nil || !ok {
				t.Fatalf("lookup of %v by column %d: ok %v, %v", row, col, ok, err)
			}
			found := false
			for _, g := range got {
				found = found || fmt.Sprint(g) == fmt.Sprint(row)
			}
			if !found {
				t.Fatalf("lookup of %v by column %d found %v", row, col, got)
			}
		}
	}
}
