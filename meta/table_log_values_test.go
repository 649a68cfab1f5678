package meta

import (
	"errors"
	"fmt"
	"testing"

	"streamdb/exec"
	"streamdb/types"
)

// valueKey is value v of the second column as a unique index on it
// encodes it.
func valueKey(v int64) []byte {
	return exec.AppendIndexValues(nil, types.Row{types.Null, types.NewInt(v)}, []int{1})
}

// holdersOfValue reads the log's value index on the second column as a
// reader that took its view at the log's current version, and returns the
// changes holding v as "id:sign" pairs, in order.
func holdersOfValue(t *testing.T, l *TableLog, v int64) []string {
	t.Helper()
	changes, ok := l.ChangesWithValues(l.version, []int{1}, valueKey(v))
	if !ok {
		t.Fatalf("ChangesWithValues(%d) at the current version refused to answer", v)
	}
	var out []string
	for _, ch := range changes {
		out = append(out, fmt.Sprintf("%d:%d", ch.Row[0].I, ch.Sign))
	}
	return out
}

func wantHolders(t *testing.T, l *TableLog, v int64, want ...string) {
	t.Helper()
	got := holdersOfValue(t, l, v)
	if len(got) != len(want) {
		t.Fatalf("value %d: got %v, want %v", v, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("value %d: got %v, want %v", v, got, want)
		}
	}
}

// TestTableLogValueIndex: the log's value index answers which pending
// changes hold a unique value, in changelog order, as entries are queued,
// forgotten once the table's state holds them (several changes of one
// entry with one value included), and dropped by a failed publish; NULLs
// hold no value.
func TestTableLogValueIndex(t *testing.T) {
	l := &TableLog{idle: make(chan struct{})}
	a := l.Queue([]exec.Change{change(1, 10, 1), change(2, 20, 1)}, nil)
	// Built at the first lookup, from the entries so far.
	wantHolders(t, l, 10, "1:1")
	// Kept up to date: value 10 moves from row 1 to row 3 in one entry;
	// row 2 is deleted and inserted again with 20 in another.
	b := l.Queue([]exec.Change{change(1, 10, -1), change(3, 10, 1)}, nil)
	c := l.Queue([]exec.Change{change(2, 20, -1), change(2, 20, 1),
		{Row: types.Row{types.NewInt(4), types.Null}, Sign: 1}}, nil)
	wantHolders(t, l, 10, "1:1", "1:-1", "3:1")
	wantHolders(t, l, 20, "2:1", "2:-1", "2:1")
	wantHolders(t, l, 30)
	// The state holds a and b: value 10's changes are gone, 20's from c
	// stay.
	a.seq, b.seq, c.seq = 5, 6, 7
	l.forgetThrough(6)
	wantHolders(t, l, 10)
	wantHolders(t, l, 20, "2:-1", "2:1")
	if len(l.values[0].at) != 1 {
		t.Fatalf("after forgetting a and b the index holds %d values, want 1 (20)", len(l.values[0].at))
	}
	// A reader whose view is older than the log's entries gets no answer.
	old := l.version
	d := l.Queue([]exec.Change{change(5, 50, 1)}, nil)
	if _, ok := l.ChangesWithValues(old, []int{1}, valueKey(50)); ok {
		t.Fatal("a reader with an older view of the entries was answered from the newer ones")
	}
	// A failed publish drops the queued entries out of order; the index
	// is rebuilt from what is left.
	l.failQueued([]*LogEntry{d}, errors.New("failed"), errors.New("later"))
	<-d.done
	wantHolders(t, l, 50)
	wantHolders(t, l, 20, "2:-1", "2:1")
	// A second column list gets an index of its own.
	if changes, ok := l.ChangesWithValues(l.version, []int{0}, exec.AppendIndexValues(nil, types.Row{types.NewInt(4)}, []int{0})); !ok || len(changes) != 1 {
		t.Fatalf("indexed on the first column, id 4: got %v %v, want its insert", changes, ok)
	}
	// Kept up to date as entries come, with the key index built too.
	if _, _, ok := l.NewestChange(l.version, []int{0}, idKey(2)); !ok {
		t.Fatal("the key index refused to answer at the current version")
	}
	l.Queue([]exec.Change{change(6, 20, 1)}, nil)
	wantHolders(t, l, 20, "2:-1", "2:1", "6:1")
}
