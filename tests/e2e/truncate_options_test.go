package e2e

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestTruncateOptions: ALTER TABLE ... SET / RESET changes a table's
// history and a stream's retention, refuses anything else with the right
// SQLSTATE, and a retention set by ALTER purges the stream, across a
// restart too.
func TestTruncateOptions(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		"CREATE TABLE t (id int PRIMARY KEY, v int)",
		"CREATE STREAM s (k int)",
		"CREATE MATERIALIZED VIEW sv AS SELECT count(*) AS n FROM s",
		"ALTER TABLE t SET (history = '2 hours')",
		"ALTER TABLE t RESET (history)",
		"ALTER TABLE IF EXISTS nope SET (history = '1 day')",
	)
	wantExecCode(t, conn, "ALTER TABLE t SET (history = 'soon')", "22023")
	wantExecCode(t, conn, "ALTER TABLE t SET (history = '-1 day')", "22023")
	wantExecCode(t, conn, "ALTER TABLE t SET (retention = 'consumed')", "22023")
	wantExecCode(t, conn, "ALTER TABLE s SET (history = '1 day')", "22023")
	wantExecCode(t, conn, "ALTER TABLE t SET (subject = 'elsewhere')", "22023")
	wantExecCode(t, conn, "ALTER TABLE nope SET (history = '1 day')", "42P01")
	wantExecCode(t, conn, "ALTER TABLE sv SET (history = '1 day')", "42809")
	wantExecCode(t, conn, "ALTER TABLE t ALTER COLUMN v TYPE smallint", "0A000") // a narrower type
	wantExecCode(t, conn, "CREATE TABLE u (id int) WITH (history = 'a while')", "22023")

	// Without the option the stream keeps everything; with it, what its
	// view and the retained checkpoints have read goes.
	testutil.Publish(t, js, "s", `{"k":1}`, `{"k":2}`)
	flush(t, conn)
	purgePassed(t, conn, js, "options")
	if n, _ := jsState(t, js, "s"); n != 2 {
		t.Fatalf("stream s without retention = 'consumed' keeps %d messages, want 2", n)
	}
	exec(t, conn, "ALTER TABLE s SET (retention = 'consumed')")
	pollDrained(t, js, "s", 0)

	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.Publish(t, js, "s", `{"k":3}`)
	flush(t, conn)
	pollDrained(t, js, "s", 0)
	wantRows(t, conn, "SELECT n FROM sv", "3")
}
