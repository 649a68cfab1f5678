package recovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// bigCopyRows is the size of the COPY TestCrashDuringBigCopy kills
// (RECOVERY_COPY_ROWS overrides it).
func bigCopyRows(t *testing.T) int64 {
	return testutil.EnvInt(t, "RECOVERY_COPY_ROWS", 2_000_000, 1)
}

// TestCrashDuringBigCopy kills streamdb with SIGKILL during a COPY of 2M
// rows into a table that a view reads: once while the client is still
// sending rows (at a row the seed picks), once after it sent the last one,
// while the server commits (after a delay the seed picks, up to one and a
// half times what a first COPY, not killed, took from its last row to its
// answer). After each restart the COPY is entirely there or entirely
// absent, and the view agrees with the table; a COPY killed while rows
// were still arriving is absent.
func TestCrashDuringBigCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2M-row COPY")
	}
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0xc0b1))
	n := bigCopyRows(t)
	srv := startServer(t, testutil.ServerOptions{
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=1s")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE big (k BIGINT PRIMARY KEY, v BIGINT, s TEXT)",
		"CREATE MATERIALIZED VIEW big_sum AS SELECT count(*) AS n, sum(v) AS total FROM big")
	// Rows are (k, k, 'row k'), so rows 1..m sum to sumTo(m).
	sumTo := func(m int64) string { return fmt.Sprint(m * (m + 1) / 2) }

	// copyRows runs COPY big FROM STDIN of keys base+1..base+n; once
	// killAt rows are handed to the driver (killAt > n: after the last),
	// after delay, it kills the server.
	copyRows := func(conn *pgx.Conn, base, killAt int64, delay time.Duration, lastRow *time.Time) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		var i int64
		var killed atomic.Bool
		dead := make(chan struct{})
		kill := func() {
			if killed.CompareAndSwap(false, true) {
				go func() {
					defer close(dead)
					time.Sleep(delay)
					srv.Kill(t)
				}()
			}
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"big"}, []string{"k", "v", "s"}, pgx.CopyFromFunc(func() ([]any, error) {
			if i == killAt {
				kill()
			}
			if i == n {
				if killAt > n {
					kill()
				}
				if lastRow != nil {
					*lastRow = time.Now()
				}
				return nil, nil
			}
			i++
			k := base + i
			return []any{k, k, "row " + strconv.FormatInt(k, 10)}, nil
		}))
		if killed.Load() {
			<-dead // the server is down before it is restarted
		}
		return err
	}

	// check restarts the server and checks that the table holds the
	// COPY of keys base+1..base+n whole or not at all, as the view does;
	// it returns whether it is there.
	check := func(what string, base int64) bool {
		t.Helper()
		srv.Restart(t)
		conn := srv.Conn(t)
		_, rows, err := queryText(conn, 10*time.Minute, "SELECT count(*), coalesce(sum(v), 0) FROM big")
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: count the table: %v %v", what, rows, err)
		}
		count, sum := atoi(t, rows[0][0]), rows[0][1]
		var kept bool
		switch {
		case count == base && sum == sumTo(base):
			kept = false
		case count == base+n && sum == sumTo(base+n):
			kept = true
		default:
			t.Fatalf("%s: after the restart the table holds %d rows (sum %s); want %d (none of the COPY, sum %s) or %d (all of it, sum %s)",
				what, count, sum, base, sumTo(base), base+n, sumTo(base+n))
		}
		if err := testutil.ExecSimple(conn, 10*time.Minute, "FLUSH"); err != nil {
			t.Fatalf("%s: FLUSH: %v", what, err)
		}
		_, vrows, err := queryText(conn, time.Minute, "SELECT n, coalesce(total, 0) FROM big_sum")
		if err != nil || len(vrows) != 1 || atoi(t, vrows[0][0]) != count || vrows[0][1] != sum {
			t.Fatalf("%s: the view big_sum holds %v (%v); the table %d rows, sum %s", what, vrows, err, count, sum)
		}
		t.Logf("%s: the COPY is %s", what, map[bool]string{true: "all there", false: "absent"}[kept])
		return kept
	}

	// 1. Not killed: it lands whole, and how long it takes from its last
	// row to its answer sets the range of the kill moments in 3.
	var lastRow time.Time
	if err := copyRows(conn, 0, -1, 0, &lastRow); err != nil {
		t.Fatalf("COPY: %v", err)
	}
	commitTook := time.Since(lastRow)
	t.Logf("a COPY of %d rows took %v from its last row to its answer", n, commitTook)
	wantRow(t, conn, "SELECT count(*) FROM big", fmt.Sprint(n))

	// 2. Killed while rows arrive: nothing of it may be there.
	killAt := n/10 + rng.Int64N(n*8/10)
	if err := copyRows(conn, n, killAt, 0, nil); err == nil {
		t.Fatal("the COPY killed at row", killAt, "succeeded")
	}
	if check(fmt.Sprintf("killed at row %d of %d", killAt, n), n) {
		t.Fatalf("a COPY killed at row %d of %d, before its client sent the rest, is there", killAt, n)
	}

	// 3. Killed after the last row, while the server commits it.
	delay := time.Duration(rng.Int64N(int64(commitTook) * 3 / 2))
	conn = srv.Conn(t)
	err := copyRows(conn, n, n+1, delay, nil)
	if kept := check(fmt.Sprintf("killed %v after the last row", delay), n); err == nil && !kept {
		t.Fatalf("the COPY was acknowledged and is absent after the restart")
	}
}

// TestCrashDuringBigTransaction kills streamdb with SIGKILL while it
// commits a transaction whose changes take many messages (bulk inserts,
// an UPDATE and a DELETE over two tables), in three rounds, at a moment
// the seed picks between sending COMMIT and one and a half times what
// such a COMMIT took in a first round that is not killed. After each restart the
// transaction is entirely there or entirely absent, in both tables, and
// the views over them agree with the tables.
func TestCrashDuringBigTransaction(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0xb16))
	srv := startServer(t, testutil.ServerOptions{
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=500ms")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE ta (k BIGINT PRIMARY KEY, v BIGINT, pad TEXT)",
		"CREATE TABLE tb (k BIGINT PRIMARY KEY, round BIGINT)",
		"CREATE MATERIALIZED VIEW ta_sum AS SELECT count(*) AS n, sum(v) AS total FROM ta",
		"CREATE MATERIALIZED VIEW tb_sum AS SELECT count(*) AS n, sum(round) AS rounds FROM tb",
		"INSERT INTO ta SELECT g, 0, 'base' FROM generate_series(1, 1000) g")
	// Round r inserts 60,000 rows into ta (about 4 MB of changelog, so
	// several messages) and 20,000 into tb, adds r to v of rows 1..1000 of
	// ta and deletes the first row it inserted into ta.
	const perRound, perRoundB = 60_000, 20_000
	type state struct{ taN, taSum, tbN, tbSum int64 }
	var done state
	done.taN = 1000
	apply := func(s state, r int64) state {
		// The inserted rows carry v = r, rows 1..1000 get r more, and
		// the deleted row is the first the round inserted.
		s.taN += perRound - 1
		s.taSum += perRound*r + 1000*r - r
		s.tbN += perRoundB
		s.tbSum += perRoundB * r
		return s
	}
	read := func(conn *pgx.Conn) (state, state) {
		t.Helper()
		var tables, views state
		for _, q := range []struct {
			sql    string
			n, sum *int64
		}{
			{"SELECT count(*), coalesce(sum(v), 0) FROM ta", &tables.taN, &tables.taSum},
			{"SELECT count(*), coalesce(sum(round), 0) FROM tb", &tables.tbN, &tables.tbSum},
			{"SELECT n, coalesce(total, 0) FROM ta_sum", &views.taN, &views.taSum},
			{"SELECT n, coalesce(rounds, 0) FROM tb_sum", &views.tbN, &views.tbSum},
		} {
			_, rows, err := queryText(conn, 5*time.Minute, q.sql)
			if err != nil || len(rows) != 1 {
				t.Fatalf("%s: %v %v", q.sql, rows, err)
			}
			*q.n, *q.sum = atoi(t, rows[0][0]), atoi(t, rows[0][1])
		}
		return tables, views
	}
	var took time.Duration
	for r := int64(1); r <= 4; r++ {
		base := 1_000_000 * r
		stmts := []string{
			"BEGIN",
			fmt.Sprintf("INSERT INTO ta SELECT g, %d, repeat('x', 40) FROM generate_series(%d, %d) g", r, base, base+perRound-1),
			fmt.Sprintf("INSERT INTO tb SELECT g, %d FROM generate_series(%d, %d) g", r, base, base+perRoundB-1),
			fmt.Sprintf("UPDATE ta SET v = v + %d WHERE k <= 1000", r),
			fmt.Sprintf("DELETE FROM ta WHERE k = %d", base),
		}
		for _, s := range stmts {
			if err := testutil.ExecSimple(conn, 5*time.Minute, s); err != nil {
				t.Fatalf("round %d: %s: %v", r, s, err)
			}
		}
		if r == 1 {
			// Not killed: how long such a COMMIT takes here sets the
			// range of the kill moments.
			start := time.Now()
			testutil.MustExec(t, conn, "COMMIT")
			took = time.Since(start)
			done = apply(done, r)
			t.Logf("round 1: COMMIT took %v", took)
			continue
		}
		delay := time.Duration(rng.Int64N(int64(took) * 3 / 2))
		committed := make(chan error, 1)
		go func() { committed <- testutil.ExecSimple(conn, 5*time.Minute, "COMMIT") }()
		time.Sleep(delay) // the kill moment after COMMIT is sent, chosen by the seed
		srv.Kill(t)
		err := <-committed
		srv.Restart(t)
		conn = srv.Conn(t)
		tables, _ := read(conn)
		with := apply(done, r)
		switch tables {
		case done:
			if err == nil {
				t.Fatalf("round %d: COMMIT was acknowledged, and after the restart nothing of it is there", r)
			}
			t.Logf("round %d, killed %v after COMMIT: absent", r, delay)
		case with:
			done = with
			t.Logf("round %d, killed %v after COMMIT: all there", r, delay)
		default:
			t.Fatalf("round %d, killed %v after COMMIT: the tables hold %+v; want %+v (none of the transaction) or %+v (all of it)", r, delay, tables, done, with)
		}
		testutil.MustExec(t, conn, "FLUSH")
		if tables, views := read(conn); views != tables {
			t.Fatalf("round %d: the views hold %+v, the tables %+v", r, views, tables)
		}
	}
}
