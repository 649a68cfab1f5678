package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"

	"streamdb/tests/testutil"
)

// TestTableWriteWithoutDescriptors runs the server out of file
// descriptors while a table is written (as idle connections did in issue
// 43). A write that then fails says truthfully whether it was stored: one
// JetStream stored but streamdb could not fsync is visible at once (the
// client gets 08007 telling it so, and writing the key again is a
// duplicate), one not stored is not there and may be written again;
// never a row that a read does not show but a write calls a duplicate.
// Once descriptors are back, writes work (unless JetStream's store kept
// its error: then they fail with 58030, and a restart reopens the stream);
// after a restart every row is there and the table takes writes again.
func TestTableWriteWithoutDescriptors(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE hk (id BIGINT PRIMARY KEY, v BIGINT, pad TEXT)",
		"INSERT INTO hk VALUES (1, 1, '')")

	pid := srv.PID()
	var saved unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &saved); err != nil {
		t.Skipf("cannot read the server's descriptor limit: %v", err)
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("cannot count the server's descriptors: %v", err)
	}
	none := uint64(len(ents))
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: none, Max: saved.Max}, nil); err != nil {
		t.Skipf("cannot lower the server's descriptor limit: %v", err)
	}
	// Writes fail while no descriptor is left: the store opens a new
	// file once a block is full (large rows fill one in a few writes).
	failedAt := 0
	var failure *pgconn.PgError
	for i := 2; i < 100 && failedAt == 0; i++ {
		err := testutil.ExecSimple(conn, 2*time.Minute, fmt.Sprintf("INSERT INTO hk VALUES (%d, %d, repeat('x', 900000))", i, i))
		if err != nil {
			t.Logf("INSERT of row %d without descriptors: %v", i, err)
			failedAt = i
			if !errors.As(err, &failure) {
				t.Fatalf("INSERT without descriptors: want an error with a SQLSTATE, got %v", err)
			}
		}
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &saved, nil); err != nil {
		t.Fatal(err)
	}
	if failedAt == 0 {
		t.Skip("the server took 100 writes without a new file descriptor")
	}
	stored := failure.Code == "08007" && strings.Contains(failure.Message, "was stored")
	if goTypeName.MatchString(failure.Message) {
		t.Errorf("message %q names Go types", failure.Message)
	}

	// The failed row is there exactly when the error said it was stored.
	rows := failedAt - 1
	if stored {
		rows = failedAt
	}
	wantRow(t, conn, "SELECT count(*) FROM hk", fmt.Sprint(rows))
	again := testutil.ExecSimple(conn, 2*time.Minute, fmt.Sprintf("INSERT INTO hk VALUES (%d, 0, 'again')", failedAt))
	var pe *pgconn.PgError
	switch {
	case stored && (!errors.As(again, &pe) || pe.Code != "23505"):
		t.Errorf("INSERT of the stored row %d again: got %v, want 23505", failedAt, again)
	case !stored && again == nil:
		rows++
	case !stored && (!errors.As(again, &pe) || pe.Code != "58030" || !strings.Contains(pe.Hint, "restart")):
		t.Errorf("INSERT of the row %d not stored, with descriptors back: got %v, want success or 58030 asking for a restart", failedAt, again)
	}
	wantRow(t, conn, "SELECT count(*) FROM hk", fmt.Sprint(rows))
	if err := testutil.ExecSimple(conn, 2*time.Minute, "UPDATE hk SET v = -1 WHERE id = 1"); err != nil && (!errors.As(err, &pe) || pe.Code != "58030") {
		t.Errorf("UPDATE with descriptors back: %v, want success or 58030", err)
	}

	srv.Restart(t)
	conn = srv.Conn(t)
	wantRow(t, conn, "SELECT count(*) FROM hk", fmt.Sprint(rows))
	testutil.MustExec(t, conn, "INSERT INTO hk VALUES (1000, 1000, 'back')")
	wantRow(t, conn, "SELECT v, pad FROM hk WHERE id = 1000", "1000 back")
	wantRow(t, conn, "SELECT count(*) FROM hk", fmt.Sprint(rows+1))
}

// TestTableStreamStoreError makes the embedded JetStream's store of a
// table's changelog fail (its block directory is gone, so the next block
// file cannot be made). JetStream keeps such an error and answers no
// later publish to the stream: the write that met it and every later one
// fail with 58030 saying that a restart reopens the stream, without each
// waiting for an acknowledgement that cannot come, and leave no row
// behind; other tables go on.
func TestTableStreamStoreError(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE hk (id BIGINT PRIMARY KEY, v BIGINT, pad TEXT)",
		"CREATE TABLE other (id BIGINT PRIMARY KEY)",
		"INSERT INTO hk VALUES (1, 1, '')")
	msgs, err := filepath.Glob(filepath.Join(srv.DataDir, "nats", "jetstream", "*", "streams", "streamdb_hk", "msgs"))
	if err != nil || len(msgs) != 1 {
		t.Fatalf("the block directory of table hk's stream: %v %v", msgs, err)
	}
	if err := os.RemoveAll(msgs[0]); err != nil {
		t.Fatal(err)
	}
	wantStoreError := func(sql string) {
		t.Helper()
		start := time.Now()
		err := testutil.ExecSimple(conn, 2*time.Minute, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "58030" || !strings.Contains(pe.Message, "stopped taking writes") || !strings.Contains(pe.Hint, "restart") {
			t.Errorf("%s: got %v, want 58030 saying the stream stopped taking writes until a restart", sql, err)
		} else if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s took %v to fail", sql, took.Round(time.Millisecond))
		}
	}
	rows := 1
	for i := 2; i < 100; i++ {
		err := testutil.ExecSimple(conn, 2*time.Minute, fmt.Sprintf("INSERT INTO hk VALUES (%d, %d, repeat('x', 900000))", i, i))
		if err == nil {
			rows++
			continue
		}
		t.Logf("INSERT of row %d: %v", i, err)
		wantStoreError(fmt.Sprintf("INSERT INTO hk VALUES (%d, 0, '')", i+1000))
		break
	}
	if rows == 99 {
		t.Fatal("the store took 98 rows of 900 kB without a new block file")
	}
	wantStoreError("INSERT INTO hk VALUES (5000, 0, '')")
	wantStoreError("UPDATE hk SET v = 0 WHERE id = 1")
	wantRow(t, conn, "SELECT count(*), min(v) FROM hk", fmt.Sprintf("%d 1", rows))
	testutil.MustExec(t, conn, "INSERT INTO other VALUES (1)")
	wantRow(t, conn, "SELECT count(*) FROM other", "1")
}
