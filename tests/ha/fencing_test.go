package ha

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// A write sent to the active server while it is paused past its lease
// reaches it only after a standby took over: it must not be committed
// (refused with 57P03, or the session ends as the server steps down), and
// the new active server's table and view must not hold it. A write
// acknowledged before the pause is kept.
func TestPausedActiveCommitsNoWrite(t *testing.T) {
	url := testutil.StartNATS(t)
	a := startActive(t, url, "fence", nil)
	b := startMember(t, url, "fence")
	conn := connectGroup(t, 30*time.Second, a, b)
	if activeAddr(conn) != a.Addr {
		t.Fatalf("the first server started is not active")
	}
	testutil.MustExec(t, conn,
		"CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)",
		"CREATE MATERIALIZED VIEW tv AS SELECT count(*) AS n, sum(v) AS s FROM t",
		"INSERT INTO t VALUES (1, 10)",
		"CHECKPOINT")

	a.Signal(t, syscall.SIGSTOP)
	// Sent now, read by a only once it runs again, after b took over.
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := conn.Exec(ctx, "INSERT INTO t VALUES (2, 20)", pgx.QueryExecModeSimpleProtocol)
		done <- err
	}()
	c := connectGroup(t, 60*time.Second, b)
	a.Signal(t, syscall.SIGCONT)
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the INSERT sent to the paused server never returned")
	}
	if err == nil {
		t.Fatal("the paused server acknowledged an INSERT after it lost its lease")
	}
	t.Logf("INSERT on the old active server: %v (SQLSTATE %q)", err, testutil.SQLState(err))
	// b's table and view: row 1 only, now and after anything a might
	// still have published had time to arrive.
	testutil.MustExec(t, c, "INSERT INTO t VALUES (3, 30)", "FLUSH")
	_, rows, qerr := testutil.QueryText(c, 30*time.Second, "SELECT id FROM t ORDER BY id", "NULL")
	if qerr != nil || len(rows) != 2 || rows[0][0] != "1" || rows[1][0] != "3" {
		t.Fatalf("table t on the new active server: %v, %v; want ids 1 and 3", rows, qerr)
	}
	_, rows, qerr = testutil.QueryText(c, 30*time.Second, "SELECT n, s FROM tv", "NULL")
	if qerr != nil || len(rows) != 1 || rows[0][0] != "2" || rows[0][1] != "40" {
		t.Fatalf("view tv on the new active server: %v, %v; want 2 rows summing to 40", rows, qerr)
	}
	// a restarts itself as a standby; the test ends only once it serves
	// as one (naming b), so that the cleanup's SIGTERM finds a process
	// that handles it rather than one still starting.
	testutil.Poll(t, 30*time.Second, "a to step down and name b", func() error {
		msg, err := refusal(a)
		if err == nil && !strings.Contains(msg, b.Addr) {
			err = errors.New(msg)
		}
		return err
	})
}
