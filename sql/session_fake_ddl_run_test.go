package sql

import (
	"errors"
	"strings"
	"testing"
)

// TestFakeEngineDDLCheckpoints: every DDL statement that changes the
// catalog takes the checkpoint that records it before it returns; one
// that does not change it (IF NOT EXISTS of an existing table) takes
// none. A failed checkpoint is reported (XX000) with the change in
// effect, and the next DDL takes its checkpoint again.
func TestFakeEngineDDLCheckpoints(t *testing.T) {
	f := newFakeEngine(t)
	n := f.node.(*fakeNode)
	s := f.session("default", "")
	count := func() int {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.ddlCheckpoints
	}
	steps := []struct {
		stmt, want  string
		checkpoints int
	}{
		{"CREATE TABLE t (id int PRIMARY KEY)", "CREATE TABLE\n", 1},
		{"CREATE TABLE IF NOT EXISTS t (id int)", "CREATE TABLE\n", 1},
		{"ALTER TABLE t ADD COLUMN v text", "ALTER TABLE\n", 2},
		{"CREATE INDEX t_v ON t (v)", "CREATE INDEX\n", 3},
		{"INSERT INTO t VALUES (1, 'a')", "INSERT 0 1\n", 3},
		{"DROP TABLE t", "DROP TABLE\n", 4},
	}
	for _, st := range steps {
		if got := run(s, st.stmt, nil, nil); got != st.want {
			t.Fatalf("%s: %q, want %q", st.stmt, got, st.want)
		}
		f.detachTables()
		if got := count(); got != st.checkpoints {
			t.Fatalf("after %s: %d DDL checkpoints, want %d", st.stmt, got, st.checkpoints)
		}
	}
	n.mu.Lock()
	n.failDDLCheckpoint = errors.New("disk full")
	n.mu.Unlock()
	got := run(s, "CREATE TABLE u (id int PRIMARY KEY)", nil, nil)
	if !strings.HasPrefix(got, "error XX000: the change is done, but the checkpoint that records it failed: disk full") {
		t.Fatalf("CREATE TABLE with a failing checkpoint: %q", got)
	}
	f.detachTables()
	if got := run(s, "INSERT INTO u VALUES (1)", nil, nil); got != "INSERT 0 1\n" {
		t.Fatalf("the table whose checkpoint failed is not there: %q", got)
	}
	if got := run(s, "CREATE SEQUENCE q", nil, nil); got != "CREATE SEQUENCE\n" || count() != 5 {
		t.Fatalf("DDL after the failed checkpoint: %q, %d checkpoints", got, count())
	}
}

// TestFakeEngineDropTableDeletesStream: CREATE TABLE makes the table's
// JetStream stream, marked as this server's; DROP TABLE deletes it once
// no retained checkpoint holds the table (the fake retains none). A
// failed CREATE leaves no stream behind.
func TestFakeEngineDropTableDeletesStream(t *testing.T) {
	f := newFakeEngine(t)
	s := f.session("default", "")
	if got := run(s, "CREATE TABLE t (id int PRIMARY KEY)", nil, nil); got != "CREATE TABLE\n" {
		t.Fatalf("create: %q", got)
	}
	f.detachTables()
	d, ok := f.lookup("t")
	if !ok || d.JSStream == "" {
		t.Fatalf("table t has no JetStream stream: %+v", d)
	}
	streams := func() map[string]bool {
		f.js.mu.Lock()
		defer f.js.mu.Unlock()
		out := map[string]bool{}
		for name := range f.js.streams {
			out[name] = true
		}
		return out
	}
	if !streams()[d.JSStream] {
		t.Fatalf("CREATE TABLE made no JetStream stream %s: %v", d.JSStream, streams())
	}
	before := len(streams())
	if got := run(s, "CREATE TABLE bad (id int PRIMARY KEY, id int)", nil, nil); !strings.HasPrefix(got, "error 42701") {
		t.Fatalf("create with a duplicate column: %q", got)
	}
	if got := len(streams()); got != before {
		t.Fatalf("a failed CREATE TABLE left a stream: %d streams, had %d", got, before)
	}
	if got := run(s, "DROP TABLE t", nil, nil); got != "DROP TABLE\n" {
		t.Fatalf("drop: %q", got)
	}
	if streams()[d.JSStream] {
		t.Fatalf("DROP TABLE kept JetStream stream %s", d.JSStream)
	}
}
