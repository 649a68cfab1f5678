package recovery

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// bigUpdateRows is the size of the table TestCrashDuringBigUpdate updates
// (RECOVERY_UPDATE_ROWS overrides it).
func bigUpdateRows(t *testing.T) int64 {
	return testutil.EnvInt(t, "RECOVERY_UPDATE_ROWS", 400_000, 2)
}

// TestCrashDuringBigUpdate kills streamdb with SIGKILL during autocommit
// UPDATEs and a DELETE whose WHERE pins no key, over a table of 400,000
// rows that a view reads: statements that stream their changes into one
// commit of many messages. Each after the first is killed at a moment
// the seed picks, between sending it and one and a half times what the
// first (an UPDATE, not killed) took. After each restart the
// statement is entirely there or entirely absent, and the view agrees
// with the table.
func TestCrashDuringBigUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("a 400,000-row table")
	}
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0xbd8))
	n := bigUpdateRows(t)
	srv := startServer(t, testutil.ServerOptions{
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=1s")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE big (k BIGINT PRIMARY KEY, v BIGINT, s TEXT)",
		"CREATE MATERIALIZED VIEW big_sum AS SELECT count(*) AS n, sum(v) AS total FROM big",
		fmt.Sprintf("INSERT INTO big SELECT g, g, 'row ' || g FROM generate_series(1, %d) g", n))

	big := summed{table: "big", col: "v", view: "big_sum"}
	cur := sums{n, n * (n + 1) / 2}
	if table, view := big.read(t, srv, "after the load"); table != cur || view != cur {
		t.Fatalf("after the load the table holds %+v, the view %+v; want %+v", table, view, cur)
	}

	// Rounds 1-3 add r to v of every even key; round 4 deletes the rows
	// whose key is a multiple of 3. expect reads, before a round, what
	// the table holds if the round lands.
	type round struct{ sql, expect string }
	var rounds []round
	for r := 1; r <= 3; r++ {
		rounds = append(rounds, round{
			sql:    fmt.Sprintf("UPDATE big SET v = v + %d WHERE k %% 2 = 0", r),
			expect: fmt.Sprintf("SELECT count(*), sum(v) + %d * count(*) FILTER (WHERE k %% 2 = 0) FROM big", r),
		})
	}
	rounds = append(rounds, round{
		sql:    "DELETE FROM big WHERE k % 3 = 0",
		expect: "SELECT count(*), coalesce(sum(v), 0) FROM big WHERE k % 3 <> 0",
	})
	expect := func(sql string) sums {
		t.Helper()
		_, rows, err := queryText(srv.Conn(t), 10*time.Minute, sql)
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: %v %v", sql, rows, err)
		}
		return sums{atoi(t, rows[0][0]), atoi(t, rows[0][1])}
	}
	var took time.Duration
	for i, rd := range rounds {
		with := expect(rd.expect)
		if i == 0 {
			start := time.Now()
			if err := testutil.ExecSimple(conn, 10*time.Minute, rd.sql); err != nil {
				t.Fatalf("%s: %v", rd.sql, err)
			}
			took = time.Since(start)
			t.Logf("%s took %v", rd.sql, took)
			cur = with
			if table, view := big.read(t, srv, "round 1"); table != cur || view != cur {
				t.Fatalf("round 1: the table holds %+v, the view %+v; want %+v", table, view, cur)
			}
			continue
		}
		delay := time.Duration(rng.Int64N(int64(took) * 3 / 2))
		conn = srv.Conn(t)
		done := make(chan error, 1)
		go func() { done <- testutil.ExecSimple(conn, 10*time.Minute, rd.sql) }()
		time.Sleep(delay) // the kill moment after the statement is sent, chosen by the seed
		srv.Kill(t)
		err := <-done
		srv.Restart(t)
		cur = big.allOrNone(t, srv, fmt.Sprintf("%s, killed %v after it was sent", rd.sql, delay), cur, with, err)
	}
}
