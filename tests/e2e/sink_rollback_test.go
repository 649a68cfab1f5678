package e2e

import (
	"fmt"
	"slices"
	"testing"

	"streamdb/tests/testutil"
)

// TestSinkRollback: after ROLLBACK TO SAVEPOINT a sink's consumer gets
// compensating changes, so that one applying every message holds the
// view's rows as the rollback left them (sources paused, so nothing
// replays yet), and then the replayed input's changes. A sink created
// after the savepoint is gone with it; one dropped after it stays dropped.
func TestSinkRollback(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "ALTER SYSTEM SET execution.checkpointing.interval = '100ms'",
		"CREATE STREAM s (k int, v int) WITH (subject = 'sr.s')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS total FROM s GROUP BY k")
	cols := []string{"k", "n", "total"}
	ev := func(i int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, i%5, i) }
	publishMany(t, js, "sr.s", 50, ev)
	flush(t, conn)
	exec(t, conn, "CREATE SINK sk FROM agg INTO 'sr.out'", "CREATE SINK gone FROM agg INTO 'sr.gone'")
	waitSink(t, conn, js, "sr.out", "changelog", "agg", cols)
	exec(t, conn, "SAVEPOINT sp")
	atSavepoint := sortedText(t, conn, "SELECT * FROM agg")

	exec(t, conn, "CREATE SINK late FROM agg INTO 'sr.late' WITH (envelope = 'debezium')", "DROP SINK gone")
	publishMany(t, js, "sr.s", 50, func(i int) string { return ev(i + 50) })
	flush(t, conn)
	before := waitSink(t, conn, js, "sr.out", "changelog", "agg", cols)

	exec(t, conn, "ALTER SYSTEM PAUSE", "ROLLBACK TO SAVEPOINT sp")
	if got := sortedText(t, conn, "SELECT * FROM agg"); !slices.Equal(got, atSavepoint) {
		t.Fatalf("after ROLLBACK TO with sources paused the view has %q, want the savepoint's %q", got, atSavepoint)
	}
	after := waitSink(t, conn, js, "sr.out", "changelog", "agg", cols)
	if len(after.Msgs) <= len(before.Msgs) {
		t.Fatalf("no compensating message after ROLLBACK TO: %d messages before, %d after", len(before.Msgs), len(after.Msgs))
	}
	if got := textRows(t, conn, "SHOW SINKS"); len(got) != 1 {
		t.Fatalf("SHOW SINKS after ROLLBACK TO a savepoint taken before sink late and before DROP SINK gone: %q", got)
	}

	exec(t, conn, "ALTER SYSTEM RESUME")
	flush(t, conn)
	waitSink(t, conn, js, "sr.out", "changelog", "agg", cols)
	publishMany(t, js, "sr.s", 20, func(i int) string { return ev(i + 100) })
	flush(t, conn)
	waitSink(t, conn, js, "sr.out", "changelog", "agg", cols)
}
