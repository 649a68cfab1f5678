package recovery

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// smallDisk mounts a tmpfs of size bytes on a new directory and returns
// it; the mount goes when the test ends, after the server's cleanups
// (registered later, so run earlier) have stopped it. It skips the test
// where mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs for the data directory")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); the full-disk test needs one", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a ballast file into dir until the filesystem is full,
// and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		_, err := f.Write(chunk)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatalf("writing the ballast: %v", err)
		}
	}
	// Fill the last partial megabyte too.
	for {
		if _, err := f.Write(chunk[:4096]); err != nil {
			break
		}
	}
	return path
}

// diskFullSchema is the table, stream and views the full-disk tests
// write and check (checkRows).
var diskFullSchema = []string{
	"CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR)",
	"CREATE STREAM s (id BIGINT, v VARCHAR)",
	"CREATE MATERIALIZED VIEW t_count AS SELECT count(*) AS n, sum(id) AS total FROM t",
	"CREATE MATERIALIZED VIEW s_count AS SELECT count(*) AS n, sum(id) AS total FROM s",
}

// waitLogged waits until the server's current run has logged msg.
func waitLogged(t *testing.T, srv *testutil.Server, msg, what string) {
	t.Helper()
	testutil.Poll(t, 30*time.Second, what, func() error {
		if !strings.Contains(runLog(srv), msg) {
			return fmt.Errorf("no %q in the log yet", msg)
		}
		return nil
	})
}

// goTypeName matches a Go type or package name leaking into a message.
var goTypeName = regexp.MustCompile(`\*[a-z]+\.[A-Z]|[a-z]+\.[A-Z][a-zA-Z]+Error|context deadline`)

// TestDiskFull runs the server with its data directory (Pebble state,
// checkpoints, the embedded JetStream store) on a 64 MiB filesystem, fills
// that filesystem, and checks that writes to tables and streams, COMMIT,
// CHECKPOINT and CREATE TABLE fail with 53100 while another session's
// reads go on, views pause and the server stays up; that
// once space is freed writes and views go on without a restart; and that
// every acknowledged row is there, and no refused one, before and after a
// restart.
func TestDiskFull(t *testing.T) {
	disk := smallDisk(t, "64m")
	srv := startServer(t, testutil.ServerOptions{DataDir: filepath.Join(disk, "data")})
	writer := srv.Conn(t)
	reader := srv.Conn(t)
	testutil.MustExec(t, writer, diskFullSchema...)
	var acked []int64 // ids acknowledged to the writer, in t and in s
	write := func(id int64) error {
		if err := testutil.ExecSimple(writer, time.Minute, fmt.Sprintf("INSERT INTO t VALUES (%d, 'row %d')", id, id)); err != nil {
			return err
		}
		return testutil.ExecSimple(writer, time.Minute, fmt.Sprintf("INSERT INTO s VALUES (%d, 'row %d')", id, id))
	}
	for id := int64(1); id <= 20; id++ {
		if err := write(id); err != nil {
			t.Fatalf("INSERT %d before the disk is full: %v", id, err)
		}
		acked = append(acked, id)
	}
	testutil.MustExec(t, writer, "FLUSH")

	ballast := fillDisk(t, disk)

	// Writes to a table and to a stream are refused with 53100 and a
	// message that says what to do.
	for _, sql := range []string{"INSERT INTO t VALUES (1000, 'refused')", "INSERT INTO s VALUES (1000, 'refused')"} {
		pe := testutil.WantCode(t, testutil.ExecSimple(writer, time.Minute, sql), "53100", sql)
		if pe != nil && (!strings.Contains(pe.Message, "disk") || pe.Hint == "" || goTypeName.MatchString(pe.Message)) {
			t.Errorf("%s: message %q (hint %q) should say the disk is full and what to do, without Go names", sql, pe.Message, pe.Hint)
		}
	}
	// A transaction's COMMIT is refused the same way, and nothing of it
	// is written.
	testutil.MustExec(t, writer, "BEGIN", "INSERT INTO t VALUES (1001, 'refused')")
	testutil.WantCode(t, testutil.ExecSimple(writer, time.Minute, "COMMIT"), "53100", "COMMIT")
	// So are a checkpoint and a new table (JetStream has no room for its
	// stream).
	for _, sql := range []string{"CHECKPOINT", "CREATE TABLE t2 (id BIGINT PRIMARY KEY)"} {
		testutil.WantCode(t, testutil.ExecSimple(writer, time.Minute, sql), "53100", sql)
	}

	// The views pause instead of taking the server down, and periodic
	// checkpoints fail without stopping it.
	waitLogged(t, srv, "views pause", "views paused for the full disk")
	waitLogged(t, srv, "checkpoint failed", "a checkpoint failed for the full disk")
	// Reads in another session go on and see every acknowledged row.
	checkRows(t, reader, acked, "while the disk is full")
	if !srv.Running() {
		t.Fatal("the server died on a full disk")
	}

	// Once space is freed, writes go on without a restart.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	next := int64(21)
	testutil.Poll(t, 30*time.Second, "writes resume after space is freed", func() error {
		if err := write(next); err != nil {
			return err
		}
		acked = append(acked, next)
		next++
		return nil
	})
	for ; next <= 40; next++ {
		if err := write(next); err != nil {
			t.Fatalf("INSERT %d after space was freed: %v", next, err)
		}
		acked = append(acked, next)
	}
	testutil.MustExec(t, writer, "FLUSH", "CHECKPOINT", "CREATE TABLE t2 (id BIGINT PRIMARY KEY)")
	checkRows(t, reader, acked, "after space was freed")

	srv.Restart(t)
	checkRows(t, srv.Conn(t), acked, "after a restart")
}

// TestDiskFullFlushOnceFreed: once space is freed, a write is taken at
// once (it checks the disk itself), while the views resume at the next
// barrier tick, when their held epochs commit. A FLUSH in between waits
// for that commit; it does not fail with the full disk's error. A long
// barrier interval makes the window wide enough to land in every time
// (TestDiskFull's FLUSH lands in it now and then).
func TestDiskFullFlushOnceFreed(t *testing.T) {
	disk := smallDisk(t, "64m")
	srv := startServer(t, testutil.ServerOptions{DataDir: filepath.Join(disk, "data"),
		ConfigFile: writeConfig(t, "execution.barrier.interval=1s")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, diskFullSchema...)
	testutil.MustExec(t, conn, "INSERT INTO t VALUES (1, 'a')", "INSERT INTO s VALUES (1, 'a')", "FLUSH")
	ballast := fillDisk(t, disk)
	waitLogged(t, srv, "views pause", "views paused for the full disk")
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	testutil.MustExec(t, conn, "INSERT INTO t VALUES (2, 'b')", "INSERT INTO s VALUES (2, 'b')", "FLUSH")
	checkRows(t, conn, []int64{1, 2}, "after FLUSH once space was freed")
}

// checkRows checks that table t holds exactly the acknowledged ids, and
// that the views over t and s count them (refused rows are in neither).
func checkRows(t *testing.T, conn *pgx.Conn, acked []int64, when string) {
	t.Helper()
	var want []string
	var total int64
	for _, id := range acked {
		want = append(want, fmt.Sprint(id))
		total += id
	}
	_, rows := mustQuery(t, conn, "SELECT id FROM t ORDER BY id")
	var got []string
	for _, r := range rows {
		got = append(got, r[0])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: table t holds ids %v, want the acknowledged %v", when, got, want)
	}
	wantAgg := fmt.Sprintf("%d %d", len(acked), total)
	for _, view := range []string{"t_count", "s_count"} {
		_, rows := mustQuery(t, conn, "SELECT n, total FROM "+view)
		if len(rows) != 1 || rows[0][0]+" "+rows[0][1] != wantAgg {
			t.Errorf("%s: %s is %v, want count and sum %s", when, view, rows, wantAgg)
		}
	}
}

// TestDiskFullAtStart restarts the server on a full disk: it waits for
// space (its state store's writes wait, they do not fail) instead of
// dying, starts once the ballast is removed, and holds every
// acknowledged row; JetStream then takes writes again (its storage limit
// does not stay at what was free when it started).
func TestDiskFullAtStart(t *testing.T) {
	disk := smallDisk(t, "64m")
	srv := startServer(t, testutil.ServerOptions{DataDir: filepath.Join(disk, "data")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, diskFullSchema...)
	testutil.MustExec(t, conn,
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO s VALUES (1, 'a'), (2, 'b')",
		"FLUSH",
	)
	srv.Stop(t)
	ballast := fillDisk(t, disk)

	// The ballast goes only once the starting server has said that it
	// waits for space.
	freed := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(runLog(srv), "wait for free space") {
			if time.Now().After(deadline) {
				freed <- errors.New("the server never said it waits for free space")
				os.Remove(ballast)
				return
			}
			time.Sleep(25 * time.Millisecond) // poll interval, under the deadline above
		}
		freed <- os.Remove(ballast)
	}()
	srv.Restart(t)
	if err := <-freed; err != nil {
		t.Fatal(err)
	}
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "INSERT INTO t VALUES (3, 'c')", "INSERT INTO s VALUES (3, 'c')", "FLUSH")
	checkRows(t, conn, []int64{1, 2, 3}, "after a start on a full disk")
}
