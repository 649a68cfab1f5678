package recovery

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestFailedTablePublishLeavesNothing makes the publish of table writes
// fail, first with JetStream refusing them (the table's stream is full)
// and then with NATS stopped, and checks that a failed INSERT, UPDATE,
// DELETE or COMMIT leaves the table and a view over it exactly as before:
// no phantom row, no "duplicate key" for a row that is not there, and,
// once the cause is gone, the same key is inserted and read back, also
// after a restart.
func TestFailedTablePublishLeavesNothing(t *testing.T) {
	ns := testutil.StartNATSServer(t)
	storeDir := ns.JetStreamConfig().StoreDir
	addr := ns.Addr().String()
	srv := startServer(t, testutil.ServerOptions{NATSURL: ns.ClientURL()})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE hk (id BIGINT PRIMARY KEY, v BIGINT)",
		"CREATE MATERIALIZED VIEW hk_sum AS SELECT count(*) AS n, sum(v) AS s FROM hk",
		"INSERT INTO hk VALUES (1, 1)")
	_, js := testutil.JetStream(t, ns.ClientURL())
	ctx := testutil.Context(t, 5*time.Minute)
	name, err := js.StreamNameBySubject(ctx, "streamdb.table.hk")
	if err != nil {
		t.Fatal(err)
	}
	limit := func(maxMsgs int64) {
		t.Helper()
		stream, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := stream.CachedInfo().Config
		cfg.MaxMsgs, cfg.Discard = maxMsgs, jetstream.DiscardNew
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	fails := func(sqls ...string) {
		t.Helper()
		err := execAll(conn, sqls...)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%q with the publish failing: want an error with a SQLSTATE, got %v", sqls, err)
		}
		if pe.Code == "23505" {
			t.Fatalf("%q with the publish failing: %s %s: the row is not in the table", sqls, pe.Code, pe.Message)
		}
		if goTypeName.MatchString(pe.Message) {
			t.Errorf("%q: message %q names Go types", sqls, pe.Message)
		}
		t.Logf("%q: %s %s", sqls, pe.Code, pe.Message)
		if tx := conn.PgConn().TxStatus(); tx != 'I' {
			testutil.MustExec(t, conn, "ROLLBACK")
		}
	}
	unchanged := func(when string) {
		t.Helper()
		_, rows := mustQuery(t, conn, "SELECT id, v FROM hk ORDER BY id")
		if fmt.Sprint(rows) != "[[1 1]]" {
			t.Errorf("hk %s: %v, want [[1 1]]", when, rows)
		}
		wantRow(t, conn, "SELECT n, s FROM hk_sum", "1 1")
	}

	// JetStream refuses: the stream holds its one message and takes no more.
	limit(1)
	for i := 0; i < 2; i++ {
		fails("INSERT INTO hk VALUES (2, 2)")
		unchanged("after a refused INSERT")
	}
	fails("UPDATE hk SET v = 10 WHERE id = 1")
	fails("DELETE FROM hk WHERE id = 1")
	fails("BEGIN", "INSERT INTO hk VALUES (3, 3)", "UPDATE hk SET v = 5 WHERE id = 1", "COMMIT")
	unchanged("after refused writes")
	limit(-1)
	testutil.MustExec(t, conn, "INSERT INTO hk VALUES (2, 2)",
		"BEGIN", "INSERT INTO hk VALUES (3, 3)", "UPDATE hk SET v = 5 WHERE id = 1", "COMMIT")
	_, rows := mustQuery(t, conn, "SELECT id, v FROM hk ORDER BY id")
	if fmt.Sprint(rows) != "[[1 5] [2 2] [3 3]]" {
		t.Fatalf("hk once JetStream takes writes again: %v, want [[1 5] [2 2] [3 3]]", rows)
	}

	// NATS stops, and comes back on the same address and store.
	ns.Shutdown()
	ns.WaitForShutdown()
	testutil.Poll(t, time.Minute, "an INSERT fails with NATS down", func() error {
		err := testutil.ExecSimple(conn, time.Minute, "INSERT INTO hk VALUES (4, 4)")
		if err == nil {
			return fmt.Errorf("INSERT with NATS down succeeded")
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			t.Fatalf("INSERT with NATS down: %s %s: the row is not in the table", pe.Code, pe.Message)
		}
		if !errors.As(err, &pe) || pe.Code != "08006" {
			return err
		}
		return nil
	})
	fails("INSERT INTO hk VALUES (4, 4)")
	testutil.RestartNATS(t, addr, storeDir, srv)
	// A publish sent while the connection was down may land once it is
	// back (the client reported 08007 for it): either way the row is
	// there exactly once and readable.
	testutil.Poll(t, time.Minute, "INSERT after NATS is back", func() error {
		err := testutil.ExecSimple(conn, time.Minute, "INSERT INTO hk VALUES (4, 4)")
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return nil
		}
		return err
	})
	want := "[[1 5] [2 2] [3 3] [4 4]]"
	if _, rows := mustQuery(t, conn, "SELECT id, v FROM hk ORDER BY id"); fmt.Sprint(rows) != want {
		t.Errorf("hk after NATS is back: %v, want %s", rows, want)
	}
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n, s FROM hk_sum", "4 14")

	srv.Restart(t)
	conn = srv.Conn(t)
	if _, rows := mustQuery(t, conn, "SELECT id, v FROM hk ORDER BY id"); fmt.Sprint(rows) != want {
		t.Errorf("hk after a restart: %v, want %s", rows, want)
	}
	wantRow(t, conn, "SELECT n, s FROM hk_sum", "4 14")
}

// execAll runs sqls in order on conn and returns the first error.
func execAll(conn *pgx.Conn, sqls ...string) error {
	for _, sql := range sqls {
		if err := testutil.ExecSimple(conn, time.Minute, sql); err != nil {
			return err
		}
	}
	return nil
}
