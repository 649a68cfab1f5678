package recovery

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestNATSDown stops the external NATS server under a running streamdb:
// writes to tables and streams fail at once with 08006 (connection
// failure: nothing was written) rather than XX000, reads of what is
// stored go on, and once NATS is back, on the same port and store,
// writes work again and hold every acknowledged row and no refused one.
func TestNATSDown(t *testing.T) {
	ns := testutil.StartNATSServer(t)
	opts := ns.JetStreamConfig()
	if opts == nil {
		t.Fatal("NATS without JetStream")
	}
	storeDir := opts.StoreDir
	addr := ns.Addr().String()
	srv := startServer(t, testutil.ServerOptions{NATSURL: ns.ClientURL()})
	writer := srv.Conn(t)
	reader := srv.Conn(t)
	testutil.MustExec(t, writer,
		"CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR)",
		"CREATE STREAM s (id BIGINT, v VARCHAR)",
		"CREATE MATERIALIZED VIEW s_count AS SELECT count(*) AS n FROM s",
		"INSERT INTO t VALUES (1, 'a')",
		"INSERT INTO s VALUES (1, 'a')",
		"FLUSH",
	)

	ns.Shutdown()
	ns.WaitForShutdown()
	// Until the server's NATS client has seen the connection close, a
	// publish goes into the dead socket and times out (08007: not known
	// whether stored). Wait for that state first: a write refused at once
	// as unreachable.
	testutil.Poll(t, time.Minute, "the server notices that NATS is down", func() error {
		var pe *pgconn.PgError
		if err := testutil.ExecSimple(writer, time.Minute, "INSERT INTO t VALUES (3, 'refused')"); !errors.As(err, &pe) || pe.Code != "08006" {
			return fmt.Errorf("INSERT with NATS down: %v", err)
		}
		return nil
	})

	for _, sql := range []string{"INSERT INTO t VALUES (2, 'refused')", "INSERT INTO s VALUES (2, 'refused')", "UPDATE t SET v = 'refused' WHERE id = 1"} {
		var pe *pgconn.PgError
		err := testutil.ExecSimple(writer, time.Minute, sql)
		if !errors.As(err, &pe) {
			t.Errorf("%s with NATS down: want an error with SQLSTATE 08006, got %v", sql, err)
			continue
		}
		if pe.Code != "08006" || goTypeName.MatchString(pe.Message) || !strings.Contains(pe.Message, "NATS") {
			t.Errorf("%s with NATS down: got %s %q, want 08006 saying NATS is unreachable, without Go names", sql, pe.Code, pe.Message)
		}
	}
	_, rows := mustQuery(t, reader, "SELECT id, v FROM t")
	if fmt.Sprint(rows) != "[[1 a]]" {
		t.Errorf("SELECT from t with NATS down: %v, want [[1 a]]", rows)
	}
	if got := testutil.Scalar(t, reader, "SELECT n FROM s_count"); got != "1" {
		t.Errorf("s_count with NATS down: %s, want 1", got)
	}

	// NATS comes back on the same address and store.
	testutil.RestartNATS(t, addr, storeDir, srv)
	testutil.Poll(t, time.Minute, "writes after NATS is back", func() error {
		return testutil.ExecSimple(writer, time.Minute, "INSERT INTO t VALUES (3, 'c')")
	})
	testutil.MustExec(t, writer, "INSERT INTO s VALUES (3, 'c')", "FLUSH")
	_, rows = mustQuery(t, reader, "SELECT id, v FROM t ORDER BY id")
	if fmt.Sprint(rows) != "[[1 a] [3 c]]" {
		t.Errorf("SELECT from t after NATS is back: %v, want [[1 a] [3 c]]", rows)
	}
	if got := testutil.Scalar(t, reader, "SELECT n FROM s_count"); got != "2" {
		t.Errorf("s_count after NATS is back: %s, want 2", got)
	}
}
