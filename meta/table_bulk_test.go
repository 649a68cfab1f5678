package meta

import (
	"context"
	"fmt"
	"testing"

	"streamdb/exec"
	"streamdb/types"
)

var bulkMembers = []types.Column{{Name: "id", Type: types.Int8}}

func bulkBatch(from, to int64) []exec.Change {
	var out []exec.Change
	for id := from; id <= to; id++ {
		out = append(out, exec.Change{Row: types.Row{types.NewInt(id)}, Sign: exec.Insert})
	}
	return out
}

// TestBulkTxnCommit: a bulk commit's batches are invisible on the
// table's subject until Commit, read back in order before it (ReadBack,
// stopped early by ErrStopReadBack), then appear as one commit at the
// reference, acknowledged and waited for.
func TestBulkTxnCommit(t *testing.T) {
	tables, p, b, _ := newTestTables(t)
	d := testTable(t, b, 7, "t")
	log := tables.Log(d.ID)
	log.Lock()
	defer log.Unlock()
	txn, err := tables.BeginBulk(d, log, bulkMembers)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]exec.Change{bulkBatch(1, 2), bulkBatch(3, 3), bulkBatch(4, 5)} {
		if err := txn.Add(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := changelog(t, b, d); len(got) != 0 {
		t.Fatalf("the table's changelog before Commit: %q, want nothing", got)
	}
	var ids []int64
	err = txn.ReadBack(context.Background(), func(changes []exec.Change) error {
		for _, ch := range changes {
			ids = append(ids, ch.Row[0].I)
		}
		return nil
	})
	if err != nil || fmt.Sprint(ids) != "[1 2 3 4 5]" {
		t.Fatalf("ReadBack: %v, %v; want the rows 1 to 5 in order", ids, err)
	}
	reads := 0
	err = txn.ReadBack(context.Background(), func([]exec.Change) error {
		reads++
		return ErrStopReadBack
	})
	if err != nil || reads != 1 {
		t.Fatalf("ReadBack stopped by ErrStopReadBack: %d reads, err %v; want 1 read and no error", reads, err)
	}
	if err := txn.Commit("a COPY"); err != nil {
		t.Fatal(err)
	}
	got := changelog(t, b, d)
	want := []string{
		`[{"op":"+","row":{"id":1}},{"op":"+","row":{"id":2}}]`,
		`[{"op":"+","row":{"id":3}}]`,
		`[{"op":"+","row":{"id":4}},{"op":"+","row":{"id":5}}]`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the table's changelog after Commit: %q, want the three batches", got)
	}
	if p.acked[d.Subject] == 0 || len(p.waits) != 1 || p.waits[0] != p.acked[d.Subject] {
		t.Fatalf("acknowledged %v, waited for %v: want the reference acknowledged and waited for", p.acked, p.waits)
	}
}

// TestBulkTxnAbort: an aborted bulk commit leaves nothing on the table's
// subject; a commit after the lease is lost is refused as fenced and
// leaves nothing either.
func TestBulkTxnAbort(t *testing.T) {
	tables, p, b, _ := newTestTables(t)
	d := testTable(t, b, 7, "t")
	log := tables.Log(d.ID)
	log.Lock()
	defer log.Unlock()
	txn, err := tables.BeginBulk(d, log, bulkMembers)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Add(bulkBatch(1, 3)); err != nil {
		t.Fatal(err)
	}
	if err := txn.Flush(); err != nil {
		t.Fatal(err)
	}
	txn.Abort()
	if got := changelog(t, b, d); len(got) != 0 {
		t.Fatalf("the table's changelog after Abort: %q, want nothing", got)
	}

	txn, err = tables.BeginBulk(d, log, bulkMembers)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Add(bulkBatch(4, 4)); err != nil {
		t.Fatal(err)
	}
	if err := txn.Flush(); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.fenced = true
	p.mu.Unlock()
	err = txn.Commit("a COPY")
	if err == nil || err.Error() != FencedError().Error() {
		t.Fatalf("Commit without the lease: %v, want %v", err, FencedError())
	}
	txn.Abort()
	if got := changelog(t, b, d); len(got) != 0 {
		t.Fatalf("the table's changelog after a fenced Commit: %q, want nothing", got)
	}
	if len(p.waits) != 0 {
		t.Fatalf("waited for %v, want no wait without a commit", p.waits)
	}
}
