package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestIndexMatchesScan feeds random changelogs (a keyed view: each change
// retracts a key's row before inserting its new one; a counted view: rows
// with multiplicities) through a materialize operator that keeps an index
// on column v, and after every epoch checks that the index holds exactly
// one entry per stored row and that reads through it (=, IN, BETWEEN, <,
// >, with NULLs among the values) return what a scan with the same filter
// returns.
func TestIndexMatchesScan(t *testing.T) {
	for name, mode := range map[string]MaterializeMode{"keyed": Keyed, "counted": Counted} {
		t.Run(name, func(t *testing.T) {
			seed := int64(39)
			rng := rand.New(rand.NewSource(seed))
			cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Int4}}
			ix := catalog.Index{Name: "t_v", Columns: []catalog.IndexColumn{{Name: "v"}}, Seq: 1, Table: FirstIndexTable + 1}
			d := &catalog.Descriptor{ID: testViewID, Name: "t", Kind: catalog.KindView,
				Columns: catalog.ColumnsFrom(cols), Indexes: []catalog.Index{ix}}
			s := &viewSide{store: memoryStore(t)}
			var keyCols []int
			if mode == Keyed {
				keyCols = []int{0}
			}
			var err error
			s.op, err = newMaterializeOp(mode, keyCols, ViewTablePrefix(testViewID), storage.StatePrefix(testViewID, viewMetaIndex), s.store,
				groupLimit{max: func() int64 { return 0 }, committed: func() uint64 { return s.committed }})
			if err != nil {
				t.Fatal(err)
			}
			s.op.indexes = newIndexWriters(d, cols)
			value := func() types.Datum {
				if rng.Intn(8) == 0 {
					return types.Null
				}
				return types.NewInt(int64(rng.Intn(10)))
			}
			live := map[int64]types.Row{} // keyed: key -> row
			var bag []types.Row           // counted: every row present
			used := 0                     // reads that went through the index
			for epoch := uint64(1); epoch <= 200; epoch++ {
				c := &Chunk{}
				for range rng.Intn(10) {
					k := int64(rng.Intn(15))
					row := types.Row{types.NewInt(k), value()}
					if mode == Keyed {
						if old, ok := live[k]; ok {
							c.Append(old, Delete)
							delete(live, k)
							if rng.Intn(3) == 0 {
								continue
							}
						}
						c.Append(row, Insert)
						live[k] = row
						continue
					}
					if len(bag) > 0 && rng.Intn(2) == 0 {
						i := rng.Intn(len(bag))
						c.Append(bag[i], Delete)
						bag = slices.Delete(bag, i, i+1)
						continue
					}
					c.Append(row, Insert)
					bag = append(bag, row)
				}
				s.epoch(t, c, epoch, false)
				// One entry per stored row.
				var entries, rows int
				if err := storage.ScanPrefix(s.store.DB(), IndexPrefix(testViewID, &ix), func(_, _ []byte) error { entries++; return nil }); err != nil {
					t.Fatal(err)
				}
				if err := storage.ScanPrefix(s.store.DB(), ViewTablePrefix(testViewID), func(_, _ []byte) error { rows++; return nil }); err != nil {
					t.Fatal(err)
				}
				if entries != rows {
					t.Fatalf("seed %d epoch %d: %d index entries for %d stored rows", seed, epoch, entries, rows)
				}
				for range 4 {
					cond := randomIndexCond(t, rng)
					scan := &plan.Scan{Object: d, Cols: cols}
					f := &plan.Filter{Input: scan, Cond: cond}
					got, ok, err := lookupByIndex(f, s.store.DB())
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						continue // bounds only by NULL: the caller scans
					}
					used++
					all, err := RunBatch(t.Context(), scan, s.store.DB())
					if err != nil {
						t.Fatal(err)
					}
					var want []types.Row
					for _, r := range all {
						if pass, err := expr.Holds(cond, r); err != nil {
							t.Fatal(err)
						} else if pass {
							want = append(want, r)
						}
					}
					if a, b := sortedText(got), sortedText(want); a != b {
						t.Fatalf("seed %d epoch %d: WHERE %s\nthrough the index: %s\nscan:              %s", seed, epoch, cond, a, b)
					}
				}
			}
			if used < 500 {
				t.Fatalf("seed %d: only %d of 800 reads went through the index", seed, used)
			}
		})
	}
}

// randomIndexCond is a random condition on column v (int4, column 1) of
// a shape an index serves.
func randomIndexCond(t *testing.T, rng *rand.Rand) expr.Expr {
	t.Helper()
	v := &expr.ColRef{Idx: 1, Name: "v", T: types.Int4}
	lit := func() expr.Expr {
		if rng.Intn(10) == 0 {
			return &expr.Const{D: types.Null, T: types.Int4}
		}
		return &expr.Const{D: types.NewInt(int64(rng.Intn(12) - 1)), T: types.Int4}
	}
	must := func(e expr.Expr, err error) expr.Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	ops := []string{"=", "<", "<=", ">", ">="}
	switch rng.Intn(4) {
	case 0:
		return must(expr.Binary(ops[rng.Intn(len(ops))], v, lit()))
	case 1:
		return must(expr.In(v, []expr.Expr{lit(), lit(), lit()}, false))
	case 2:
		lo := must(expr.Binary(">=", v, lit()))
		hi := must(expr.Binary("<=", v, lit()))
		return must(expr.Binary("AND", lo, hi))
	}
	// A bound on either side, written constant first.
	return must(expr.Binary(ops[1+rng.Intn(4)], lit(), v))
}

func sortedText(rows []types.Row) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r)
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}
