package sql

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"streamdb/exec"
	"streamdb/types"
)

// memScratch is a scratchStore in memory, for tests.
type memScratch struct{ kv map[string][]byte }

func (m *memScratch) Write(fill func(set func(k, v []byte), del func(k []byte))) error {
	fill(func(k, v []byte) { m.kv[string(k)] = bytes.Clone(v) }, func(k []byte) { delete(m.kv, string(k)) })
	return nil
}

func (m *memScratch) Scan(lo, hi []byte, reverse bool, fn func(k, v []byte) (bool, error)) error {
	var keys []string
	for k := range m.kv {
		if k >= string(lo) && (hi == nil || k < string(hi)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if reverse {
		slices.Reverse(keys)
	}
	for _, k := range keys {
		if more, err := fn([]byte(k), m.kv[k]); err != nil || !more {
			return err
		}
	}
	return nil
}

func (m *memScratch) DeleteRange(lo, hi []byte) error {
	for k := range m.kv {
		if k >= string(lo) && k < string(hi) {
			delete(m.kv, k)
		}
	}
	return nil
}

func (m *memScratch) Close() error { return nil }

func spillRow(k int64, s string) types.Row { return types.Row{types.NewInt(k), types.NewString(s)} }

// TestTableSpill: a spill finds each key's newest change and its chain,
// hands over identities in key order with their changes, the block's own
// changes in order, and forgets the changes a ROLLBACK TO truncates.
func TestTableSpill(t *testing.T) {
	bs := &blockSpill{db: &memScratch{kv: map[string][]byte{}}}
	other := &tableSpill{s: bs, id: 8, ncols: 2, key: []int{0}}
	ts := &tableSpill{s: bs, id: 7, ncols: 2, key: []int{0}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// A commit the snapshot held past the table's state, then the block's.
	must(ts.append([]exec.Change{{Row: spillRow(5, "pending"), Sign: exec.Insert}}))
	ts.own = bs.next
	must(other.append([]exec.Change{{Row: spillRow(1, "other table"), Sign: exec.Insert}}))
	ts.stmts = append(ts.stmts, bs.next)
	must(ts.append([]exec.Change{{Row: spillRow(2, "b"), Sign: exec.Insert}, {Row: spillRow(1, "a"), Sign: exec.Insert}}))
	ts.stmts = append(ts.stmts, bs.next)
	must(ts.append([]exec.Change{{Row: spillRow(1, "a"), Sign: exec.Delete}, {Row: spillRow(1, "a2"), Sign: exec.Insert}}))

	key := func(k int64) []byte { return rowKey(ts.key, spillRow(k, "")) }
	ch, ok, err := ts.newest(key(1))
	must(err)
	if !ok || ch.Sign != exec.Insert || ch.Row[1].S != "a2" {
		t.Fatalf("newest of key 1: %v %v", ch, ok)
	}
	if _, ok, _ := ts.newest(key(3)); ok {
		t.Fatal("key 3 has no change, but newest found one")
	}
	chain, err := ts.chain(key(1))
	must(err)
	if len(chain) != 3 || chain[1].Sign != exec.Delete {
		t.Fatalf("chain of key 1: %v", chain)
	}

	var ids []int64
	must(ts.eachIdentity(func(_ []byte, chain []spillChange) error {
		ids = append(ids, chain[0].Row[0].I)
		return nil
	}))
	if !slices.Equal(ids, []int64{1, 2, 5}) {
		t.Fatalf("identities: %v", ids)
	}
	var firsts []string
	must(ts.eachFirstOwn(func(_ []byte, first exec.Change) error {
		firsts = append(firsts, first.Row[1].S)
		return nil
	}))
	if !slices.Equal(firsts, []string{"a", "b"}) {
		t.Fatalf("first own changes: %v (the snapshot's pending change is not the block's)", firsts)
	}
	own := func() []string {
		var out []string
		must(ts.eachOwn(1, func(batch []exec.Change) error {
			for _, ch := range batch {
				out = append(out, ch.Row[1].S)
			}
			return nil
		}))
		return out
	}
	if got := own(); !slices.Equal(got, []string{"b", "a", "a", "a2"}) {
		t.Fatalf("own changes: %v", got)
	}

	// ROLLBACK TO the second statement's savepoint.
	must(ts.truncate(ts.stmts[1]))
	if got := own(); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("own changes after truncate: %v", got)
	}
	if ch, _, _ := ts.newest(key(1)); ch.Row[1].S != "a" || ch.Sign != exec.Insert {
		t.Fatalf("newest of key 1 after truncate: %v", ch)
	}
	if n, err := other.chain(rowKey(other.key, spillRow(1, ""))); err != nil || len(n) != 1 {
		t.Fatalf("the other table's change after truncate: %v %v", n, err)
	}
}

func TestApplySigns(t *testing.T) {
	c := func(signs ...int8) []spillChange {
		var out []spillChange
		for _, s := range signs {
			out = append(out, spillChange{Change: exec.Change{Sign: s}})
		}
		return out
	}
	for _, tc := range []struct {
		keyed bool
		n     int
		chain []spillChange
		want  int
	}{
		{false, 2, c(-1, -1, -1, 1), 1},
		{false, 0, c(1, 1), 2},
		{true, 1, c(-1, 1), 1},
		{true, 0, c(1, -1), 0},
	} {
		if got := applySigns(tc.keyed, tc.n, tc.chain); got != tc.want {
			t.Errorf("applySigns(%v, %d, %v) = %d; want %d", tc.keyed, tc.n, tc.chain, got, tc.want)
		}
	}
}

// TestCommitView: the COMMIT's view of a spill sees the block's own
// changes only (not the commits its snapshot held past the table's
// state), and blockChanges groups them with the statements still in
// memory, ordered after the spill, with the net insertions of each row
// identity named by the change that first held them.
func TestCommitView(t *testing.T) {
	bs := &blockSpill{db: &memScratch{kv: map[string][]byte{}}}
	ts := &tableSpill{s: bs, id: 7, ncols: 2, key: []int{0}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ts.append([]exec.Change{{Row: spillRow(5, "pending"), Sign: exec.Insert}, {Row: spillRow(1, "pending"), Sign: exec.Insert}}))
	ts.own = bs.next
	must(ts.append([]exec.Change{{Row: spillRow(1, "pending"), Sign: exec.Delete}, {Row: spillRow(1, "a"), Sign: exec.Insert}, {Row: spillRow(2, "b"), Sign: exec.Insert}}))
	view := ts.commitView()
	key := func(k int64) []byte { return rowKey(ts.key, spillRow(k, "")) }
	if _, ok, err := view.newest(key(5)); err != nil || ok {
		t.Fatalf("the view sees key 5's change from before the block: %v %v", ok, err)
	}
	if chain, err := view.chain(key(1)); err != nil || len(chain) != 2 || chain[0].Sign != exec.Delete {
		t.Fatalf("the view's chain of key 1: %v %v", chain, err)
	}
	if chain, err := ts.chain(key(1)); err != nil || len(chain) != 3 {
		t.Fatalf("a statement's chain of key 1: %v %v", chain, err)
	}

	b := &blockChanges{key: ts.key, spill: view, tailSeq: ts.end, tail: []exec.Change{
		{Row: spillRow(2, "b"), Sign: exec.Delete}, {Row: spillRow(3, "c"), Sign: exec.Insert}, {Row: spillRow(1, "a"), Sign: exec.Delete}, {Row: spillRow(1, "a"), Sign: exec.Insert},
	}}
	var got []string
	must(b.eachIdentity(func(chain []spillChange) error {
		for _, ins := range netInsertions(chain) {
			got = append(got, fmt.Sprintf("%d:%s@%d", ins.Row[0].I, ins.Row[1].S, ins.seq))
		}
		if len(netInsertions(chain)) == 0 {
			got = append(got, fmt.Sprintf("%d:none", chain[0].Row[0].I))
		}
		return nil
	}))
	// Key 1: "a" inserted at seq 3 (the spill), deleted and inserted
	// again in memory; key 2 inserted and deleted; key 3 only in memory
	// (tail seq 5 + 1).
	want := []string{"1:a@3", "2:none", "3:c@6"}
	if !slices.Equal(got, want) {
		t.Fatalf("net insertions: %v; want %v", got, want)
	}
}

// TestTableSpillStatementView: a statement's view of the spill does not
// see the changes appended after it was taken (the statement's own),
// through any of the reads a statement makes.
func TestTableSpillStatementView(t *testing.T) {
	bs := &blockSpill{db: &memScratch{kv: map[string][]byte{}}}
	ts := &tableSpill{s: bs, id: 7, ncols: 2, key: []int{0}, sets: [][]int{{1}}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ts.append([]exec.Change{{Row: spillRow(1, "a"), Sign: exec.Insert}, {Row: spillRow(2, "b"), Sign: exec.Insert}}))
	view := ts.statementView()
	// The statement's own changes: key 1 updated, key 3 inserted.
	must(ts.append([]exec.Change{{Row: spillRow(1, "a"), Sign: exec.Delete}, {Row: spillRow(1, "x"), Sign: exec.Insert},
		{Row: spillRow(3, "x"), Sign: exec.Insert}}))
	key := func(k int64) []byte { return rowKey(ts.key, spillRow(k, "")) }

	ch, ok, err := view.newest(key(1))
	must(err)
	if !ok || ch.Sign != exec.Insert || ch.Row[1].S != "a" {
		t.Fatalf("view's newest of key 1: %v %v, want the insertion of a", ch, ok)
	}
	if ch, ok, err := ts.newest(key(1)); err != nil || !ok || ch.Row[1].S != "x" {
		t.Fatalf("spill's newest of key 1: %v %v %v, want x", ch, ok, err)
	}
	chain, err := view.chain(key(1))
	must(err)
	if len(chain) != 1 {
		t.Fatalf("view's chain of key 1 has %d changes, want 1", len(chain))
	}
	if _, ok, err := view.newest(key(3)); err != nil || ok {
		t.Fatalf("view sees key 3, which the statement inserted (err %v)", err)
	}
	var ids int
	must(view.eachIdentity(func(_ []byte, chain []spillChange) error {
		ids++
		for _, ch := range chain {
			if ch.Row[1].S == "x" {
				t.Errorf("view hands over the statement's change %v", ch)
			}
		}
		return nil
	}))
	if ids != 2 {
		t.Fatalf("view hands over %d identities, want 2", ids)
	}
	x := exec.AppendIndexValues(nil, spillRow(0, "x"), []int{1})
	found, ok, err := view.identitiesWith(ts.key, []int{1}, x)
	must(err)
	if !ok || len(found) != 0 {
		t.Fatalf("view finds %d rows holding x (ok %v), want none", len(found), ok)
	}
	if found, _, err := ts.identitiesWith(ts.key, []int{1}, x); err != nil || len(found) != 2 {
		t.Fatalf("spill finds %d rows holding x (err %v), want 2", len(found), err)
	}
}
