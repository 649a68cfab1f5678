package recovery

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestIndexAcrossKillAndRollbackTo: indexes on a table and on a
// materialized view answer as a scan does after rounds of random writes
// each ended by kill -9 and a restart (their entries come back with the
// rows from the same checkpoint and the same changelog replay), and
// ROLLBACK TO a savepoint taken before CREATE INDEX leaves no index.
func TestIndexAcrossKillAndRollbackTo(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x1dec5))
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE ixc (k int PRIMARY KEY, v int, s text)",
		"INSERT INTO ixc SELECT g, g % 40, 's' || (g % 7) FROM generate_series(1, 3000) g",
		"CREATE INDEX ixc_v ON ixc (v)",
		"CREATE UNIQUE INDEX ixc_s_k ON ixc (s, k)",
		"CREATE MATERIALIZED VIEW ixc_mv AS SELECT v, count(*) AS n FROM ixc GROUP BY v",
		"CREATE INDEX ixc_mv_n ON ixc_mv (n)")
	// agree compares reads through each index with the same reads as
	// scans (v + 0 and n + 0 cannot use an index).
	agree := func(round int) {
		t.Helper()
		testutil.MustExec(t, conn, "FLUSH")
		for _, q := range []struct{ idx, scan string }{
			{"SELECT k, v, s FROM ixc WHERE v = %d ORDER BY k", "SELECT k, v, s FROM ixc WHERE v + 0 = %d ORDER BY k"},
			{"SELECT k FROM ixc WHERE v BETWEEN %d AND %[1]d + 3 ORDER BY k", "SELECT k FROM ixc WHERE v + 0 BETWEEN %d AND %[1]d + 3 ORDER BY k"},
			{"SELECT k FROM ixc WHERE s = 's' || (%d %% 7) ORDER BY k", "SELECT k FROM ixc WHERE s || '' = 's' || (%d %% 7) ORDER BY k"},
			{"SELECT v, n FROM ixc_mv WHERE n = 75 + %d %% 3 ORDER BY v", "SELECT v, n FROM ixc_mv WHERE n + 0 = 75 + %d %% 3 ORDER BY v"},
		} {
			x := rng.IntN(45)
			_, a := mustQuery(t, conn, fmt.Sprintf(q.idx, x))
			_, b := mustQuery(t, conn, fmt.Sprintf(q.scan, x))
			if !slices.EqualFunc(a, b, slices.Equal) {
				t.Fatalf("seed %d, round %d: %s gives %d rows, the scan %d", seed, round, fmt.Sprintf(q.idx, x), len(a), len(b))
			}
		}
		for _, q := range []string{"SELECT * FROM ixc WHERE v = 1", "SELECT * FROM ixc_mv WHERE n = 1"} {
			_, plan := mustQuery(t, conn, "EXPLAIN "+q)
			if !strings.Contains(fmt.Sprint(plan), "Index Scan using") {
				t.Fatalf("seed %d, round %d: EXPLAIN %s does not use the index: %v", seed, round, q, plan)
			}
		}
	}
	agree(0)
	next := 10000
	for round := 1; round <= 3; round++ {
		for i := 0; i < 20; i++ {
			v := rng.IntN(45)
			switch rng.IntN(3) {
			case 0:
				testutil.MustExec(t, conn, fmt.Sprintf("INSERT INTO ixc SELECT g, %d, 's' || (g %% 7) FROM generate_series(%d, %d) g", v, next, next+rng.IntN(30)))
				next += 100
			case 1:
				testutil.MustExec(t, conn, fmt.Sprintf("UPDATE ixc SET v = %d WHERE v = %d AND k %% 3 = %d", rng.IntN(45), v, rng.IntN(3)))
			case 2:
				testutil.MustExec(t, conn, fmt.Sprintf("DELETE FROM ixc WHERE v = %d AND k %% 5 = 0", v))
			}
		}
		if round == 2 {
			testutil.MustExec(t, conn, "CHECKPOINT")
		}
		agree(round)
		srv.Kill(t)
		srv.Restart(t)
		conn = srv.Conn(t)
		agree(round)
	}
	// A row written onto itself is no duplicate of itself in the unique
	// index.
	_, rows := mustQuery(t, conn, "SELECT k, s FROM ixc ORDER BY k LIMIT 1")
	if _, _, err := queryText(conn, testutil.ExecTimeout, fmt.Sprintf("UPDATE ixc SET k = k WHERE k = %s", rows[0][0])); err != nil {
		t.Fatalf("seed %d: rewriting a row onto itself: %v", seed, err)
	}

	testutil.MustExec(t, conn, "SAVEPOINT before_index")
	testutil.MustExec(t, conn, "CREATE INDEX ixc_late ON ixc (s)", "CREATE INDEX ixc_mv_v ON ixc_mv (v)")
	if _, plan := mustQuery(t, conn, "EXPLAIN SELECT * FROM ixc WHERE s = 's1' AND v = 2"); !strings.Contains(fmt.Sprint(plan), "ixc_") {
		t.Fatalf("EXPLAIN before the rollback: %v", plan)
	}
	testutil.MustExec(t, conn, "ROLLBACK TO SAVEPOINT before_index")
	conn = srv.Conn(t)
	_, names := mustQuery(t, conn, "SELECT indexname FROM pg_indexes ORDER BY 1")
	if got := fmt.Sprint(names); got != "[[ixc_mv_n] [ixc_pkey] [ixc_s_k] [ixc_v]]" {
		t.Fatalf("indexes after ROLLBACK TO a savepoint taken before CREATE INDEX: %s", got)
	}
	if _, plan := mustQuery(t, conn, "EXPLAIN SELECT * FROM ixc_mv WHERE v = 3"); strings.Contains(fmt.Sprint(plan), "Index Scan") {
		t.Fatalf("EXPLAIN after the rollback uses an index: %v", plan)
	}
	// The name is free again, and the index is built anew.
	testutil.MustExec(t, conn, "CREATE INDEX ixc_late ON ixc (s)")
	_, a := mustQuery(t, conn, "SELECT count(*) FROM ixc WHERE s = 's3'")
	_, b := mustQuery(t, conn, "SELECT count(*) FROM ixc WHERE s || '' = 's3'")
	if a[0][0] != b[0][0] {
		t.Fatalf("after the rollback and a new CREATE INDEX: %s rows through the index, %s by a scan", a[0][0], b[0][0])
	}
}
