package sql

import (
	"errors"
	"strings"
	"testing"
)

// TestFakeEngineFencedWrite: a server that lost its group's lease
// refuses a write (57P03) and writes nothing; reads go on.
func TestFakeEngineFencedWrite(t *testing.T) {
	f := newFakeEngine(t)
	if err := f.create("CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	s := f.session("default", "")
	if got := run(s, "INSERT INTO t VALUES (1)", nil, nil); got != "INSERT 0 1\n" {
		t.Fatalf("insert: %q", got)
	}
	f.host.(*fakeHost).fenced = errors.New("lease lost")
	for _, stmt := range []string{"INSERT INTO t VALUES (2)", "DELETE FROM t"} {
		if got := run(s, stmt, nil, nil); !strings.HasPrefix(got, "error 57P03: could not write: this server no longer holds its group's lease") {
			t.Errorf("%s while fenced: %q", stmt, got)
		}
	}
	if got := run(s, "SELECT id FROM t", nil, nil); got != "1\nSELECT 1\n" {
		t.Errorf("read while fenced: %q", got)
	}
}

// TestFakeEngineFailedPublish: a commit whose changelog message JetStream
// refuses fails with the cause and leaves nothing behind; the next write
// (which first rereads the table's whole changelog) commits.
func TestFakeEngineFailedPublish(t *testing.T) {
	f := newFakeEngine(t)
	if err := f.create("CREATE TABLE t (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	s := f.session("default", "")
	run(s, "INSERT INTO t VALUES (1, 'a')", nil, nil)
	f.js.mu.Lock()
	f.js.fail = errors.New("stream is full")
	f.js.mu.Unlock()
	got := run(s, "UPDATE t SET v = 'b'", nil, nil)
	if !strings.HasPrefix(got, "error ") || !strings.Contains(got, "stream is full") {
		t.Fatalf("update with a failing publish: %q", got)
	}
	if got := run(s, "SELECT v FROM t", nil, nil); got != "a\nSELECT 1\n" {
		t.Fatalf("after the failed update: %q", got)
	}
	if got := run(s, "UPDATE t SET v = 'c'", nil, nil); got != "UPDATE 1\n" {
		t.Fatalf("update after the failure: %q", got)
	}
	if got := run(s, "SELECT v FROM t", nil, nil); got != "c\nSELECT 1\n" {
		t.Fatalf("after the second update: %q", got)
	}
}
