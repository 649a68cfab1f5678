package recovery

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestReplayProgress: after ROLLBACK TO SAVEPOINT the views re-read what
// came after the savepoint; the replay is listed in streamdb_progress with
// the messages it has to read, and the log says when it starts and ends.
// The sources are paused during the rollback so that the replay cannot
// finish before the test looks.
func TestReplayProgress(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"ALTER SYSTEM SET execution.progress.interval = '100ms'",
		"CREATE STREAM readings (sensor int, v int) WITH (subject = 'readings')",
		"CREATE MATERIALIZED VIEW per_sensor AS SELECT sensor, count(*) AS n FROM readings GROUP BY sensor")
	_, js := testutil.JetStream(t, srv.NATSURL())
	const before, after = 100, 400
	msgs := make([]string, 0, after)
	for i := range after {
		msgs = append(msgs, fmt.Sprintf(`{"sensor": %d, "v": %d}`, i%7, i))
	}
	testutil.Publish(t, js, "readings", msgs[:before]...)
	testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT before_more")
	testutil.Publish(t, js, "readings", msgs[before:]...)
	testutil.MustExec(t, conn, "FLUSH", "ALTER SYSTEM PAUSE", "ROLLBACK TO SAVEPOINT before_more")

	rows := queryMaps(t, conn, "SELECT * FROM streamdb_progress")
	if len(rows) != 1 || !strings.Contains(rows[0]["job"], "replay") || rows[0]["messages_total"] != fmt.Sprint(after-before) || rows[0]["messages_read"] != "0" {
		t.Fatalf("streamdb_progress while paused after the rollback: %v; want one replay of %d messages, none read", rows, after-before)
	}
	if got := testutil.Scalar(t, conn, "SELECT sum(n) FROM per_sensor"); got != fmt.Sprint(before) {
		t.Fatalf("rows counted after the rollback %s, want %d", got, before)
	}
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME")
	testutil.Poll(t, 30*time.Second, "the replay to end", func() error {
		if rows := queryMaps(t, conn, "SELECT * FROM streamdb_progress"); len(rows) > 0 {
			return fmt.Errorf("streamdb_progress still lists %v", rows)
		}
		if len(logLines(runLog(srv), "replay done")) == 0 {
			return fmt.Errorf("no \"replay done\" line in the log")
		}
		return nil
	})
	if got := testutil.Scalar(t, conn, "SELECT sum(n) FROM per_sensor"); got != fmt.Sprint(after) {
		t.Fatalf("rows counted after the replay %s, want %d", got, after)
	}
	started := logLines(runLog(srv), "replay started")
	if len(started) == 0 || logField(started[len(started)-1], "messages") != fmt.Sprint(after-before) {
		t.Fatalf("log lines of the replay's start %q; want one with messages=%d", started, after-before)
	}
}
