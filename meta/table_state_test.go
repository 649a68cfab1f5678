package meta

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"testing"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/storage"
	"streamdb/types"
)

// fakeSpill is a block's spill as a list of changes in order.
type fakeSpill struct {
	key     []int
	changes []exec.Change
}

func (f *fakeSpill) Newest(identity []byte) (exec.Change, bool, error) {
	chain, _ := f.Chain(identity)
	if len(chain) == 0 {
		return exec.Change{}, false, nil
	}
	return chain[len(chain)-1], true, nil
}

func (f *fakeSpill) Chain(identity []byte) ([]exec.Change, error) {
	var out []exec.Change
	for _, ch := range f.changes {
		if bytes.Equal(RowKey(f.key, ch.Row), identity) {
			out = append(out, ch)
		}
	}
	return out, nil
}

func (f *fakeSpill) EachIdentity(fn func(identity []byte, chain []exec.Change) error) error {
	var ids []string
	for _, ch := range f.changes {
		if id := string(RowKey(f.key, ch.Row)); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		chain, _ := f.Chain([]byte(id))
		if err := fn([]byte(id), chain); err != nil {
			return err
		}
	}
	return nil
}

// tableModel is a table's rows by identity, with their count, changed
// as ApplyChanges changes rows.
type tableModel struct {
	key   []int
	rows  map[string]types.Row
	count map[string]int
}

func (m *tableModel) apply(ch exec.Change) {
	id := string(RowKey(m.key, ch.Row))
	switch {
	case ch.Sign < 0 && m.count[id] > 0:
		if m.count[id]--; m.count[id] == 0 {
			delete(m.count, id)
			delete(m.rows, id)
		}
	case ch.Sign > 0 && m.key != nil:
		m.rows[id], m.count[id] = ch.Row, 1
	case ch.Sign > 0:
		m.rows[id] = ch.Row
		m.count[id]++
	}
}

func (m *tableModel) sorted() []string {
	var out []string
	for id, r := range m.rows {
		for range m.count[id] {
			out = append(out, fmt.Sprint(r))
		}
	}
	slices.Sort(out)
	return out
}

// randomChanges returns n changes to m that a writer could make (a
// deletion takes a row the table holds), applying them to m.
func randomChanges(rng *rand.Rand, m *tableModel, n int) []exec.Change {
	var out []exec.Change
	for range n {
		var ch exec.Change
		if len(m.rows) > 0 && rng.Intn(3) == 0 {
			ids := make([]string, 0, len(m.rows))
			for id := range m.rows {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			ch = exec.Change{Row: m.rows[ids[rng.Intn(len(ids))]], Sign: exec.Delete}
		} else {
			ch = exec.Change{Row: types.Row{types.NewInt(rng.Int63n(8)), types.NewInt(rng.Int63n(3))}, Sign: exec.Insert}
			if id := string(RowKey(m.key, ch.Row)); m.key != nil && m.count[id] > 0 {
				// An update of a keyed row: its deletion, then the new row.
				old := m.rows[id]
				out = append(out, exec.Change{Row: old, Sign: exec.Delete})
				m.apply(exec.Change{Row: old, Sign: exec.Delete})
			}
		}
		out = append(out, ch)
		m.apply(ch)
	}
	return out
}

func rowStrings(rows []types.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r)
	}
	return out
}

// TestTableStateReads: a TableState's reads (Rows, EachRow, RowsWhere,
// Lookup, KeyTaken, CountOf) agree with a model of the table for random
// stored rows, spilled changes and pending changes, for a table with a
// primary key and one without, on a real Pebble store.
func TestTableStateReads(t *testing.T) {
	store, err := storage.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	id := uint32(100)
	for seed := int64(1); seed <= 60; seed++ {
		for _, keyed := range []bool{true, false} {
			id++
			rng := rand.New(rand.NewSource(seed))
			d := &catalog.Descriptor{ID: id, Name: "t", Kind: catalog.KindTable,
				Columns: []catalog.Column{{Name: "id", Type: "bigint"}, {Name: "v", Type: "bigint"}}}
			var key []int
			if keyed {
				d.PrimaryKey, key = []string{"id"}, []int{0}
			}
			m := &tableModel{key: key, rows: map[string]types.Row{}, count: map[string]int{}}
			randomChanges(rng, m, rng.Intn(12))
			batch := store.NewBatch()
			for ident, r := range m.rows {
				if err := batch.Set(append(exec.ViewTablePrefix(id), ident...), exec.EncodeViewValue(r, uint64(m.count[ident])), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := store.Commit(batch, false); err != nil {
				t.Fatal(err)
			}
			var spill *fakeSpill
			if rng.Intn(2) == 0 {
				spill = &fakeSpill{key: key, changes: randomChanges(rng, m, rng.Intn(10))}
			}
			pending := randomChanges(rng, m, rng.Intn(10))
			ts, err := NewTableState(d, store.Snapshot(), pending)
			if err != nil {
				t.Fatal(err)
			}
			if spill != nil {
				ts.SetSpill(spill)
			}
			where := fmt.Sprintf("seed %d, keyed %v, spill %v", seed, keyed, spill != nil)
			checkTableState(t, ctx, where, ts, m)
			ts.Close()
		}
	}
}

func checkTableState(t *testing.T, ctx context.Context, where string, ts *TableState, m *tableModel) {
	t.Helper()
	want := m.sorted()
	rows, err := ts.Rows(ctx)
	if err != nil {
		t.Fatalf("%s: Rows: %v", where, err)
	}
	if got := slices.Sorted(slices.Values(rowStrings(rows))); !slices.Equal(got, want) {
		t.Fatalf("%s: Rows %v, want %v", where, got, want)
	}
	var each []types.Row
	if err := ts.EachRow(ctx, func(r types.Row) error { each = append(each, r); return nil }); err != nil {
		t.Fatalf("%s: EachRow: %v", where, err)
	}
	if got, rows := rowStrings(each), rowStrings(rows); !slices.Equal(got, rows) {
		t.Fatalf("%s: EachRow %v, want Rows' rows in Rows' order %v", where, got, rows)
	}
	all, err := ts.RowsWhere(ctx, nil)
	if err != nil || !slices.Equal(slices.Sorted(slices.Values(rowStrings(all))), want) {
		t.Fatalf("%s: RowsWhere(nil) %v, %v; want %v", where, rowStrings(all), err, want)
	}
	for k := range int64(9) {
		for v := range int64(4) {
			r := types.Row{types.NewInt(k), types.NewInt(v)}
			ident := RowKey(ts.Key(), r)
			n, err := ts.CountOf(ident)
			if err != nil || n != m.count[string(ident)] {
				t.Fatalf("%s: CountOf(%v) %d, %v; want %d", where, r, n, err, m.count[string(ident)])
			}
			if ts.Key() == nil {
				continue
			}
			got, err := ts.Lookup(ident)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(m.rows[string(ident)]) {
				t.Fatalf("%s: Lookup(%d) %v, %v; want %v", where, k, got, err, m.rows[string(ident)])
			}
			taken, err := ts.KeyTaken(ident)
			if err != nil || taken != (m.rows[string(ident)] != nil) {
				t.Fatalf("%s: KeyTaken(%d) %v, %v; want %v", where, k, taken, err, !taken)
			}
		}
	}
}
