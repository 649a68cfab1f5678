package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestSubscribeRollback: ROLLBACK TO SAVEPOINT ends a running SUBSCRIBE
// with 55000 once it has delivered the epochs committed before, and a
// subscriber that comes back AS OF the savepoint rebuilds the view as the
// rollback left it, then follows it again.
func TestSubscribeRollback(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'rb.s')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, sum(v) AS total FROM s GROUP BY k")
	ev := func(i int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, i%7, i) }
	publishMany(t, js, "rb.s", 70, ev)
	flush(t, conn)
	exec(t, conn, "SAVEPOINT before")

	sconn := srv.Conn(t)
	ctx := testutil.Context(t, 2*time.Minute)
	rows, err := sconn.Query(ctx, "SUBSCRIBE agg", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	ch, done, m := startFeed(t, rows)
	publishMany(t, js, "rb.s", 70, ev)
	flush(t, conn)
	waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg"))

	exec(t, conn, "ROLLBACK TO SAVEPOINT before")
	select {
	case err := <-done:
		wantCode(t, err, "55000")
	case <-ctx.Done():
		t.Fatal("the feed did not end at ROLLBACK TO")
	}

	rows, err = sconn.Query(ctx, "SUBSCRIBE agg AS OF SAVEPOINT before", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	ch, done, m = startFeed(t, rows)
	flush(t, conn)
	waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg"))
	publishMany(t, js, "rb.s", 35, ev)
	flush(t, conn)
	waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg"))
	if err := sconn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	wantCode(t, <-done, "57014")
}
