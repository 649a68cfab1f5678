package exec

import (
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// BenchmarkViewRowVNodes measures what a vnode in a view's row keys
// costs readers (DataflowViewRowVNodes against the format before it),
// over a keyed view of 200,000 rows flushed to sstables: "point" is one
// lookup by key (WHERE k = c: PinnedKeys, then a point read), "scan"
// reads every row (as SELECT * does). Compare the sub-benchmarks of one
// run; -count alternates them.
func BenchmarkViewRowVNodes(b *testing.B) {
	const rows = 200000
	for _, c := range []struct {
		name     string
		dataflow catalog.FormatVersion
		vnodes   int
	}{
		{"before", catalog.DataflowViewRowVNodes - 1, 0},
		{"vnodes", catalog.DataflowViewRowVNodes, catalog.DefaultVNodes},
	} {
		st := memoryStore(b)
		const id = 60
		op, err := newMaterializeOp(Keyed, []int{0}, ViewTablePrefix(id), storage.StatePrefix(id, viewMetaIndex), st, groupLimit{})
		if err != nil {
			b.Fatal(err)
		}
		op.vnodes = c.vnodes
		for e := range rows / 10000 {
			ch := &Chunk{}
			for i := range 10000 {
				k := int64(e*10000+i) * 7919 % rows
				ch.Append(types.Row{types.NewInt(k), types.NewString("some text of a row")}, Insert)
			}
			if err := op.Push(ch); err != nil {
				b.Fatal(err)
			}
			batch := st.NewBatch()
			if err := op.Barrier(Epoch{ID: uint64(e + 1), Batch: batch}); err != nil {
				b.Fatal(err)
			}
			if err := st.Commit(batch, false); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
		if err := st.Flush(); err != nil {
			b.Fatal(err)
		}
		desc := &catalog.Descriptor{ID: id, Name: "v", Kind: catalog.KindView, Dataflow: c.dataflow}
		scan := &plan.Scan{Object: desc, Cols: rowVNodeCols, StoredKey: []int{0}}
		b.Run("point/"+c.name, func(b *testing.B) {
			for i := range b.N {
				k := int64(i) * 104729 % rows
				cond, err := expr.Binary("=", &expr.ColRef{Idx: 0, T: types.Int8}, &expr.Const{D: types.NewInt(k), T: types.Int8})
				if err != nil {
					b.Fatal(err)
				}
				got, ok, err := lookupByKey(&plan.Filter{Input: scan, Cond: cond}, st.DB())
				if err != nil || !ok || len(got) != 1 {
					b.Fatalf("lookup of %d: %d rows, ok %v, %v", k, len(got), ok, err)
				}
			}
		})
		b.Run("scan/"+c.name, func(b *testing.B) {
			for range b.N {
				n := 0
				err := storage.ScanPrefix(st.DB(), ViewTablePrefix(id), func(_, v []byte) error {
					_, _, err := DecodeViewValue(v, len(rowVNodeCols))
					n++
					return err
				})
				if err != nil || n != rows {
					b.Fatalf("scan: %d rows, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
