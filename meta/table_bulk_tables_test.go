package meta

import (
	"fmt"
	"testing"

	"streamdb/catalog"
	"streamdb/exec"
)

// TestBulkTxnTables: a bulk commit over two tables (a DELETE and its
// foreign key actions) takes batches for either in any interleaving;
// neither table shows any of it before Commit, and after it each shows
// its own batches in order, as one commit at its reference, acknowledged
// and waited for. A table given no data still gets its reference, with
// nothing in it, so that the transaction can be removed.
func TestBulkTxnTables(t *testing.T) {
	tables, p, b, _ := newTestTables(t)
	parent := testTable(t, b, 7, "parent")
	child := testTable(t, b, 8, "child")
	idle := testTable(t, b, 9, "idle")
	var parts []BulkTable
	for _, d := range []*catalog.Descriptor{parent, child, idle} {
		log := tables.Log(d.ID)
		log.Lock()
		defer log.Unlock()
		parts = append(parts, BulkTable{D: d, Log: log, Members: bulkMembers})
	}
	txn, err := tables.BeginBulkTables(parts)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		table int
		batch []exec.Change
	}{{0, bulkBatch(1, 2)}, {1, bulkBatch(10, 11)}, {0, bulkBatch(3, 3)}, {1, bulkBatch(12, 12)}}
	for _, s := range steps {
		if err := txn.AddTo(s.table, s.batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*catalog.Descriptor{parent, child} {
		if got := changelog(t, b, d); len(got) != 0 {
			t.Fatalf("table %s's changelog before Commit: %q, want nothing", d.Name, got)
		}
	}
	if err := txn.Commit("a DELETE"); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"parent": {`[{"op":"+","row":{"id":1}},{"op":"+","row":{"id":2}}]`, `[{"op":"+","row":{"id":3}}]`},
		"child":  {`[{"op":"+","row":{"id":10}},{"op":"+","row":{"id":11}}]`, `[{"op":"+","row":{"id":12}}]`},
		"idle":   nil,
	}
	for _, d := range []*catalog.Descriptor{parent, child, idle} {
		if got := changelog(t, b, d); fmt.Sprint(got) != fmt.Sprint(want[d.Name]) {
			t.Fatalf("table %s's changelog after Commit: %q, want %q", d.Name, got, want[d.Name])
		}
		if p.acked[d.Subject] == 0 {
			t.Fatalf("table %s: no reference acknowledged (%v)", d.Name, p.acked)
		}
	}
	if len(p.waits) != 3 {
		t.Fatalf("waited for %v, want each of the three tables", p.waits)
	}
}
