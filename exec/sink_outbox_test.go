package exec

import (
	"testing"

	"streamdb/storage"
	"streamdb/types"
)

// TestOutboxChangesRoundTrip: an outbox entry decodes to the changes it
// was made of, and SinkChanges expands multiplicities.
func TestOutboxChangesRoundTrip(t *testing.T) {
	diffs := []RowDiff{
		{Row: types.Row{types.NewInt(1), types.NewString("a")}, Diff: -2},
		{Row: types.Row{types.NewInt(2), types.Null}, Diff: 3},
	}
	v := EncodeOutboxChanges(diffs)
	if snap, n := OutboxEntryInfo(v); snap || n != 2 {
		t.Fatalf("OutboxEntryInfo = %v, %d; want false, 2", snap, n)
	}
	got, err := DecodeOutboxChanges(v, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Diff != -2 || got[1].Diff != 3 || got[0].Row[1].S != "a" || !got[1].Row[1].IsNull() {
		t.Fatalf("decoded %v", got)
	}
	ch := SinkChanges(got)
	if len(ch) != 5 || ch[0].Sign != -1 || ch[1].Sign != -1 || ch[2].Sign != 1 {
		t.Fatalf("SinkChanges: %v", ch)
	}
	if snap, _ := OutboxEntryInfo([]byte{outboxSnapshot}); !snap {
		t.Fatal("a snapshot mark reads as changes")
	}
	if _, err := DecodeOutboxChanges([]byte{outboxSnapshot}, 2); err == nil {
		t.Fatal("a snapshot mark decoded as changes")
	}
}

// TestOutboxKeysOrder: outbox keys sort by epoch, then part (a rollback's
// compensation before the epoch's own changes), and parse back.
func TestOutboxKeysOrder(t *testing.T) {
	a := storage.OutboxKey(7, 10, storage.OutboxEpoch)
	b := storage.OutboxKey(7, 11, storage.OutboxRollback)
	c := storage.OutboxKey(7, 11, storage.OutboxEpoch)
	if string(a) >= string(b) || string(b) >= string(c) {
		t.Fatal("outbox keys out of order")
	}
	id, epoch, part, ok := storage.ParseOutboxKey(b)
	if !ok || id != 7 || epoch != 11 || part != storage.OutboxRollback {
		t.Fatalf("ParseOutboxKey = %d %d %d %v", id, epoch, part, ok)
	}
	if id, _, _, ok := storage.ParseOutboxKey(storage.SinkStartedKey(7)); ok || id != 7 {
		t.Fatal("the start key parses as an entry")
	}
}
