package recovery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestCopyNATSDown stops the external NATS server in the middle of a COPY
// into a table, after the server has published part of its rows: the COPY
// fails with a connection error (08006 or 08007) that names NATS and no Go
// type, none of its rows is ever visible, in the table or in a view over
// it, and once NATS is back on the same port and store the same COPY
// succeeds whole.
func TestCopyNATSDown(t *testing.T) {
	ns := testutil.StartNATSServer(t)
	opts := ns.JetStreamConfig()
	if opts == nil {
		t.Fatal("NATS without JetStream")
	}
	storeDir, addr := opts.StoreDir, ns.Addr().String()
	srv := startServer(t, testutil.ServerOptions{NATSURL: ns.ClientURL()})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE big (k BIGINT PRIMARY KEY, v BIGINT, s TEXT)",
		"CREATE MATERIALIZED VIEW big_sum AS SELECT count(*) AS n, sum(v) AS total FROM big",
		"INSERT INTO big VALUES (0, 0, 'row 0')",
		"FLUSH")

	// copyRows copies rows 1..n; after stopAt rows it stops NATS and
	// waits until NATS is down before it hands over more.
	const n = 400_000
	copyRows := func(stopAt int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		i := 0
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"big"}, []string{"k", "v", "s"}, pgx.CopyFromFunc(func() ([]any, error) {
			if i == stopAt {
				ns.Shutdown()
				ns.WaitForShutdown()
			}
			if i == n {
				return nil, nil
			}
			i++
			return []any{int64(i), int64(i), "row " + strconv.Itoa(i)}, nil
		}))
		return err
	}

	// Stopped a quarter of the way in: the rows before were published as
	// the COPY's data (many messages), the rest arrive while NATS is down.
	err := copyRows(n / 4)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("COPY with NATS stopped part-way: want a connection error, got %v", err)
	}
	if (pe.Code != "08006" && pe.Code != "08007") || goTypeName.MatchString(pe.Message) || !strings.Contains(pe.Message, "NATS") {
		t.Errorf("COPY with NATS stopped part-way: got %s %q, want 08006 or 08007 saying NATS is unreachable, without Go names", pe.Code, pe.Message)
	}
	t.Logf("COPY with NATS stopped part-way: %s %s", pe.Code, pe.Message)
	reader := srv.Conn(t)
	wantRow(t, reader, "SELECT count(*), sum(v) FROM big", "1 0")

	testutil.RestartNATS(t, addr, storeDir, srv)
	testutil.Poll(t, 2*time.Minute, "writes after NATS is back", func() error {
		return testutil.ExecSimple(conn, time.Minute, "INSERT INTO big VALUES (-1, 0, 'row -1')")
	})
	if err := copyRows(-1); err != nil {
		t.Fatalf("COPY after NATS is back: %v", err)
	}
	want := fmt.Sprintf("%d %d", n+2, n*(n+1)/2)
	wantRow(t, reader, "SELECT count(*), sum(v) FROM big", want)
	testutil.MustExec(t, reader, "FLUSH")
	wantRow(t, reader, "SELECT n, total FROM big_sum", want)
}
