package meta

import (
	"errors"
	"testing"

	"streamdb/exec"
	"streamdb/types"
)

func change(id, v int64, sign int8) exec.Change {
	return exec.Change{Row: types.Row{types.NewInt(id), types.NewInt(v)}, Sign: sign}
}

// idKey is the row identity of id in a table keyed on its first column.
func idKey(id int64) []byte { return RowKey([]int{0}, types.Row{types.NewInt(id)}) }

// newestOf reads the log's index as a reader that took its view at the
// log's current version.
func newestOf(t *testing.T, l *TableLog, id int64) (exec.Change, bool) {
	t.Helper()
	ch, found, ok := l.NewestChange(l.version, []int{0}, idKey(id))
	if !ok {
		t.Fatalf("newestChange(%d) at the current version refused to answer", id)
	}
	return ch, found
}

// TestTableLogIndex: the log's key index answers a point read with the
// newest change to a key among the entries as they are queued, forgotten
// once the table's state holds them, and dropped by a failed publish.
func TestTableLogIndex(t *testing.T) {
	l := newTableLog(nil)
	a := l.Queue([]exec.Change{change(1, 10, 1), change(2, 20, 1)}, nil)
	// Built at the first read, from the entries so far.
	if ch, found := newestOf(t, l, 1); !found || ch.Row[1].I != 10 || ch.Sign != 1 {
		t.Fatalf("key 1: got %v %v, want the insert of (1, 10)", ch, found)
	}
	// Kept up to date as entries come: key 1 deleted, then 2 replaced.
	b := l.Queue([]exec.Change{change(1, 10, -1)}, nil)
	c := l.Queue([]exec.Change{change(2, 20, -1), change(2, 21, 1)}, nil)
	if ch, found := newestOf(t, l, 1); !found || ch.Sign != -1 {
		t.Fatalf("key 1: got %v %v, want its deletion", ch, found)
	}
	if ch, found := newestOf(t, l, 2); !found || ch.Row[1].I != 21 {
		t.Fatalf("key 2: got %v %v, want (2, 21)", ch, found)
	}
	if _, found := newestOf(t, l, 3); found {
		t.Fatal("key 3 was never written, yet found")
	}
	// The state holds a and b: key 1's newest change is gone with b, key
	// 2's stays (it is in c).
	a.seq, b.seq, c.seq = 5, 6, 7
	l.forgetThrough(6)
	if _, found := newestOf(t, l, 1); found {
		t.Fatal("key 1: its changes were forgotten, yet found")
	}
	if ch, found := newestOf(t, l, 2); !found || ch.Row[1].I != 21 {
		t.Fatalf("key 2 after forgetting a and b: got %v %v, want (2, 21)", ch, found)
	}
	// A reader whose view is older than the log's entries gets no answer.
	old := l.version
	d := l.Queue([]exec.Change{change(3, 30, 1)}, nil)
	if _, _, ok := l.NewestChange(old, []int{0}, idKey(3)); ok {
		t.Fatal("a reader with an older view of the entries was answered from the newer ones")
	}
	// A failed publish drops the queued entries out of order; the index
	// is rebuilt from what is left.
	e := l.Queue([]exec.Change{change(2, 21, -1)}, nil)
	failed, later := errors.New("failed"), errors.New("later")
	l.failQueued([]*LogEntry{d}, failed, later)
	if err := <-d.done; err != failed {
		t.Fatalf("the failed batch's entry got %v", err)
	}
	if err := <-e.done; err != later {
		t.Fatalf("the entry queued after the failed batch got %v", err)
	}
	if _, found := newestOf(t, l, 3); found {
		t.Fatal("key 3: its commit failed, yet found")
	}
	if ch, found := newestOf(t, l, 2); !found || ch.Row[1].I != 21 || ch.Sign != 1 {
		t.Fatalf("key 2 after the failure: got %v %v, want (2, 21) from c", ch, found)
	}
	// An index built for other key columns is rebuilt for the reader's.
	if _, found, ok := l.NewestChange(l.version, []int{1}, RowKey([]int{0}, types.Row{types.NewInt(21)})); !ok || !found {
		t.Fatal("keyed on the second column, value 21 should be found")
	}
}
