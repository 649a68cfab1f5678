package tools

import (
	"context"
	"testing"

	"streamdb/tests/testutil"
)

// TestSubscribeCursors: psycopg2 and psycopg 3 read a view's feed through
// DECLARE c CURSOR FOR SUBSCRIBE and FETCH ALL c WITH (timeout): the
// columns (epoch, diff, the view's), the snapshot, then an UPDATE as a
// retraction followed by an insertion.
func TestSubscribeCursors(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	for _, sql := range []string{
		"CREATE TABLE kv (k int PRIMARY KEY, v int)",
		"INSERT INTO kv VALUES (1, 10), (2, 20)",
		"CREATE MATERIALIZED VIEW m AS SELECT k, v FROM kv",
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	got := runScript(t, "subscribe.py", srv.DSN())
	want := map[string]string{
		"psycopg2 columns":  "['epoch', 'diff', 'k', 'v']",
		"psycopg2 snapshot": "[(1, 1, 10), (1, 2, 20)]",
		"psycopg2 changes":  "[(-1, 2, 20), (1, 2, 21)]",
		"psycopg3 columns":  "['epoch', 'diff', 'k', 'v']",
		"psycopg3 snapshot": "[(1, 1, 10), (1, 2, 21)]",
		"psycopg3 changes":  "[(-1, 2, 21), (1, 2, 22)]",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if t.Failed() {
		t.Logf("all checks:\n%v", got)
	}
}
