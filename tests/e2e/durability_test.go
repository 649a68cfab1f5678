//go:build linux

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
	"streamdb/tests/testutil/cachestat"
)

// streamDirty returns the dirty page-cache pages (written, not yet on
// disk) of a JetStream stream's message blocks in the embedded server's
// store under dataDir, by cachestat(2) (Linux 6.5+).
func streamDirty(t *testing.T, dataDir, stream string) uint64 {
	t.Helper()
	return cachestat.DirtyPages(t, filepath.Join(dataDir, "nats", "jetstream", "$G", "streams"), stream)
}

func showSetting(t *testing.T, conn *pgx.Conn, name string) string {
	t.Helper()
	rows := textRows(t, conn, "SHOW "+name)
	if len(rows) != 1 {
		t.Fatalf("SHOW %s: %q", name, rows)
	}
	return rows[0]
}

// TestSynchronousCommit: by default a table write (and an INSERT into a
// stream) is acknowledged only once the embedded JetStream server's files
// hold it on disk: no dirty page is left behind. SET synchronous_commit =
// off takes effect at once (writes then leave dirty pages: the control
// that shows the check sees an unsynced write), ALTER SYSTEM SET survives
// a restart, and the log says what an acknowledged write survives.
func TestSynchronousCommit(t *testing.T) {
	s := startServer(t)
	conn := s.Conn(t)
	if got := showSetting(t, conn, "synchronous_commit"); got != "on" {
		t.Fatalf("SHOW synchronous_commit = %q, want on", got)
	}
	if !strings.Contains(s.Logs(), `survives="OS crash (streamdb fsyncs the embedded JetStream streams)"`) {
		t.Fatalf("the log does not say that acknowledged writes survive an OS crash:\n%s", s.Logs())
	}
	exec(t, conn,
		"CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)",
		"CREATE STREAM ev (k BIGINT) WITH (subject = 'dur.ev')")
	tableStream := "streamdb_t"
	streamStream := "streamdb_ev"

	write := func(i int) {
		t.Helper()
		exec(t, conn, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", i, i))
	}
	for i := 0; i < 10; i++ {
		write(i)
		if d := streamDirty(t, s.DataDir, tableStream); d != 0 {
			t.Fatalf("INSERT %d into table t acknowledged with %d dirty pages in its changelog: not fsynced", i, d)
		}
	}
	exec(t, conn, "UPDATE t SET v = v + 1 WHERE id = 3")
	if d := streamDirty(t, s.DataDir, tableStream); d != 0 {
		t.Fatalf("UPDATE acknowledged with %d dirty pages", d)
	}
	exec(t, conn, "BEGIN", "DELETE FROM t WHERE id = 4", "INSERT INTO t VALUES (100, 1)", "COMMIT")
	if d := streamDirty(t, s.DataDir, tableStream); d != 0 {
		t.Fatalf("COMMIT acknowledged with %d dirty pages", d)
	}
	exec(t, conn, "INSERT INTO ev VALUES (1), (2), (3)")
	if d := streamDirty(t, s.DataDir, streamStream); d != 0 {
		t.Fatalf("INSERT into stream ev acknowledged with %d dirty pages", d)
	}

	// off, for this server at once.
	exec(t, conn, "SET synchronous_commit = off")
	if got := showSetting(t, conn, "synchronous_commit"); got != "off" {
		t.Fatalf("SHOW synchronous_commit = %q after SET off", got)
	}
	sawDirty := false
	for i := 1000; i < 1050 && !sawDirty; i++ {
		write(i)
		sawDirty = streamDirty(t, s.DataDir, tableStream) > 0
	}
	if !sawDirty {
		t.Fatal("with synchronous_commit off no write ever left a dirty page: the check cannot tell synced writes from unsynced ones")
	}
	exec(t, conn, "SET synchronous_commit = on")
	write(2000)
	if d := streamDirty(t, s.DataDir, tableStream); d != 0 {
		t.Fatalf("on again: INSERT acknowledged with %d dirty pages", d)
	}

	// ALTER SYSTEM SET persists across a restart.
	exec(t, conn, "ALTER SYSTEM SET synchronous_commit = off")
	s.Restart(t)
	conn = s.Conn(t)
	if got := showSetting(t, conn, "synchronous_commit"); got != "off" {
		t.Fatalf("after ALTER SYSTEM SET off and a restart: SHOW synchronous_commit = %q", got)
	}
	if !strings.Contains(s.Logs(), `synchronous_commit=off survives="process crash only"`) {
		t.Fatalf("the log does not say that, with synchronous_commit off, writes survive a process crash only:\n%s", s.Logs())
	}
	sawDirty = false
	for i := 3000; i < 3050 && !sawDirty; i++ {
		write(i)
		sawDirty = streamDirty(t, s.DataDir, tableStream) > 0
	}
	if !sawDirty {
		t.Fatal("after ALTER SYSTEM SET synchronous_commit = off and a restart, writes are still synced")
	}
	if _, err := conn.Exec(testutil.Context(t, 10*time.Second), "SET synchronous_commit = sometimes"); err == nil {
		t.Fatal("SET synchronous_commit = sometimes was accepted")
	}
}

// TestSynchronousCommitExternalNATS: with --nats-url streamdb cannot fsync
// the NATS server's files; with synchronous_commit on it warns at start
// that the server is not known to sync every write, and with it off it
// does not.
func TestSynchronousCommitExternalNATS(t *testing.T) {
	url := testutil.StartNATS(t)
	s := testutil.StartServer(t, testutil.ServerOptions{NATSURL: url})
	if !strings.Contains(s.Logs(), "is not known to fsync every write") {
		t.Fatalf("no warning about the external NATS server's sync setting:\n%s", s.Logs())
	}
	off := testutil.StartServer(t, testutil.ServerOptions{NATSURL: url, Env: []string{"STREAMDB_SYNCHRONOUS_COMMIT=off"}})
	if strings.Contains(off.Logs(), "is not known to fsync every write") {
		t.Fatalf("warning with synchronous_commit off:\n%s", off.Logs())
	}
	if got := showSetting(t, off.Conn(t), "synchronous_commit"); got != "off" {
		t.Fatalf("STREAMDB_SYNCHRONOUS_COMMIT=off: SHOW synchronous_commit = %q", got)
	}
}
