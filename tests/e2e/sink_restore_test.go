package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestSinkRestoreOlder: a server started --restore-from a savepoint older
// than what a sink already published does not publish again: the epochs
// after the savepoint are cut anew, so SHOW SINKS says the sink stopped
// and why, and the subject gets nothing more.
func TestSinkRestoreOlder(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "ALTER SYSTEM SET execution.checkpointing.interval = '100ms'",
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"INSERT INTO t VALUES (1, 1)",
		"CREATE SINK s FROM t INTO 'restore.out'",
		"SAVEPOINT old",
		"INSERT INTO t VALUES (2, 2)", "FLUSH")
	cols := []string{"k", "v"}
	published := len(waitSink(t, conn, js, "restore.out", "changelog", "t", cols).Msgs)
	srv.Stop(t)

	again := testutil.StartServer(t, testutil.ServerOptions{DataDir: srv.DataDir,
		Args: []string{"--restore-from", filepath.Join(srv.DataDir, "savepoints", "old")}})
	conn = again.Conn(t)
	_, js = testutil.JetStream(t, again.NATSURL())
	exec(t, conn, "INSERT INTO t VALUES (3, 3)", "FLUSH")
	poll(t, 30*time.Second, func() error {
		rows := textRows(t, conn, "SHOW SINKS")
		if len(rows) != 1 || !strings.Contains(rows[0], " stopped: the subject holds epoch ") {
			return fmt.Errorf("SHOW SINKS: %q", rows)
		}
		return nil
	})
	f, err := testutil.ReadSink(js, "restore.out", "changelog", cols)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Msgs) != published {
		t.Fatalf("the subject had %d messages before the restore and %d after", published, len(f.Msgs))
	}
}
