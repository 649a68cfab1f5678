package recovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestPGSourceTransactionsWhole runs source transactions that move
// amounts between rows of two mirrored tables, so that the sum over both
// tables never changes, while streamdb takes checkpoints and FLUSHes and
// is killed with -9 and restarted in the middle. Every read of a view
// summing both tables, and of both tables in one query, must show the
// constant sum: a source transaction lands in one epoch, never half of it
// (one table's rows without the other's, or part of one table's). At the
// end both mirrors equal the source row by row.
func TestPGSourceTransactionsWhole(t *testing.T) {
	seed := seedFor(t)
	const rows, start = 40, 100
	const total = 2 * rows * start
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE acct_a (id int PRIMARY KEY, bal int NOT NULL)",
		"CREATE TABLE acct_b (id int PRIMARY KEY, bal int NOT NULL)",
		fmt.Sprintf("INSERT INTO acct_a SELECT g, %d FROM generate_series(1, %d) g", start, rows),
		fmt.Sprintf("INSERT INTO acct_b SELECT g, %d FROM generate_series(1, %d) g", start, rows),
		"CREATE PUBLICATION bank FOR TABLE acct_a, acct_b")

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		fmt.Sprintf("CREATE SOURCE bank FROM POSTGRES (CONNECTION '%s', PUBLICATION 'bank') FOR ALL TABLES", pg.DSN()),
		"CREATE MATERIALIZED VIEW bank_total AS SELECT sum(bal) AS s FROM (SELECT bal FROM acct_a UNION ALL SELECT bal FROM acct_b) u")

	// transfers runs transactions until stop closes, each moving amounts
	// from rows of one table to rows of the other (and within a table),
	// some with a row deleted and inserted again with its balance.
	transfers := func(stop <-chan struct{}, seed uint64) (*sync.WaitGroup, *atomic.Int64) {
		var wg sync.WaitGroup
		done := new(atomic.Int64)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			c, err := pgx.Connect(context.Background(), pg.DSN())
			if err != nil {
				t.Errorf("connect to the source: %v", err)
				return
			}
			defer c.Close(context.Background())
			for {
				select {
				case <-stop:
					return
				default:
				}
				tx := "BEGIN;"
				for range 1 + r.IntN(4) {
					from, to := []string{"acct_a", "acct_b"}[r.IntN(2)], []string{"acct_a", "acct_b"}[r.IntN(2)]
					x := 1 + r.IntN(9)
					tx += fmt.Sprintf(" UPDATE %s SET bal = bal - %d WHERE id = %d; UPDATE %s SET bal = bal + %d WHERE id = %d;",
						from, x, 1+r.IntN(rows), to, x, 1+r.IntN(rows))
				}
				if r.IntN(4) == 0 {
					tbl, id := []string{"acct_a", "acct_b"}[r.IntN(2)], 1+r.IntN(rows)
					tx += fmt.Sprintf(" CREATE TEMP TABLE keep ON COMMIT DROP AS SELECT * FROM %[1]s WHERE id = %[2]d; DELETE FROM %[1]s WHERE id = %[2]d; INSERT INTO %[1]s SELECT * FROM keep;", tbl, id)
				}
				tx += " COMMIT"
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := c.Exec(ctx, tx)
				cancel()
				if err != nil {
					t.Errorf("source transaction: %v", err)
					return
				}
				done.Add(1)
			}
		}()
		return &wg, done
	}

	// check reads the sum through the view and through both tables in one
	// query, n times, with FLUSHes and checkpoints in between.
	check := func(when string, n int) {
		t.Helper()
		for i := range n {
			for _, q := range []string{
				"SELECT s FROM bank_total",
				"SELECT (SELECT sum(bal) FROM acct_a) + (SELECT sum(bal) FROM acct_b)",
			} {
				_, got, err := queryText(conn, time.Minute, q)
				if err != nil {
					t.Fatalf("%s: %s: %v", when, q, err)
				}
				if len(got) != 1 || got[0][0] != fmt.Sprint(total) {
					t.Fatalf("%s: %s gives %v, want %d: part of a source transaction is visible without the rest (seed %d)", when, q, got, total, seed)
				}
			}
			switch i % 10 {
			case 3:
				testutil.MustExec(t, conn, "FLUSH")
			case 7:
				takeCheckpoint(t, conn)
			}
		}
	}

	stop := make(chan struct{})
	wg, done := transfers(stop, seed)
	testutil.Poll(t, 2*time.Minute, "the first transfers to be applied", func() error {
		_, got, err := queryText(conn, time.Minute, "SELECT applied_lsn FROM streamdb_sources")
		if err != nil || len(got) == 0 {
			return fmt.Errorf("streamdb_sources: %v %v", got, err)
		}
		if done.Load() < 20 {
			return fmt.Errorf("%d transfers committed on the source so far", done.Load())
		}
		return nil
	})
	check("under load", 150)

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	check("after kill -9 and restart, under load", 100)
	close(stop)
	wg.Wait()
	t.Logf("%d source transactions", done.Load())

	waitSourceCaughtUp(t, src, conn, "the source to apply every transfer")
	check("caught up", 5)
	for _, q := range []string{"SELECT * FROM acct_a ORDER BY id", "SELECT * FROM acct_b ORDER BY id"} {
		// Read once: streamdb_sources said every source transaction is
		// applied, so every one of them is visible.
		cols, want := mustQuery(t, src, q)
		_, got := mustQuery(t, conn, q)
		if d := diffRows(cols, want, got, nil); d != "" {
			t.Errorf("%s: the mirror differs from the source right after streamdb_sources said it caught up (seed %d): %s", q, seed, d)
		}
	}
}
