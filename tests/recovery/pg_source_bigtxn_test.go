package recovery

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"streamdb/tests/testutil"
)

// TestPGSourceBigTransactions runs source transactions of many rows, some
// larger than the applier's queue holds (it is bounded by changes, so a
// transaction over the bound goes alone), and checks row by row that the
// mirror equals the source, across a kill -9 of streamdb in the middle of
// applying them: each transaction applied whole and once.
func TestPGSourceBigTransactions(t *testing.T) {
	seed := seedFor(t)
	r := rand.New(rand.NewPCG(seed, 4))
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE big (k int PRIMARY KEY, v int NOT NULL, note text)",
		"INSERT INTO big SELECT g, 0, 'n' || g FROM generate_series(1, 30000) g",
		"CREATE PUBLICATION pub FOR TABLE big")
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, fmt.Sprintf("CREATE SOURCE s FROM POSTGRES (CONNECTION '%s', PUBLICATION 'pub') FOR ALL TABLES", pg.DSN()))

	// Transactions of 1k to 50k changes: updates of a random range,
	// inserts past the end, deletes.
	txns := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			lo := r.IntN(30000)
			size := 1000 + r.IntN(49000)
			testutil.MustExec(t, src, fmt.Sprintf(
				"BEGIN; UPDATE big SET v = v + 1, note = 'u%d' WHERE k BETWEEN %d AND %d; "+
					"INSERT INTO big SELECT g, %d, NULL FROM generate_series(%d, %d) g ON CONFLICT (k) DO UPDATE SET v = -1; "+
					"DELETE FROM big WHERE k %% 101 = %d; COMMIT",
				i, lo, lo+size, i, 30000+i*100, 30000+i*100+size/10, r.IntN(101)))
		}
	}
	caughtUp := func(what string) {
		t.Helper()
		waitSourceCaughtUp(t, src, conn, what)
	}

	same := func(when string) {
		t.Helper()
		q := "SELECT k, v, note FROM big ORDER BY k"
		cols, want := mustQuery(t, src, q)
		_, got := mustQuery(t, conn, q)
		if d := diffRows(cols, want, got, nil); d != "" {
			t.Errorf("%s: the mirror differs from the source (seed %d; %d rows, source %d): %s", when, seed, len(got), len(want), d)
		}
	}

	txns(12)
	caughtUp("the source to apply the big transactions")
	same("after the big transactions")
	_, peak := testutil.ProcessRSS(srv.PID())
	t.Logf("server peak RSS %d MiB", peak>>20)

	// Killed while applying: the restart applies from the position the
	// tables hold, each transaction whole.
	txns(6)
	srv.Kill(t)
	txns(3)
	srv.Restart(t)
	conn = srv.Conn(t)
	caughtUp("the source to apply the big transactions after a kill -9")
	same("after a kill -9")
}
