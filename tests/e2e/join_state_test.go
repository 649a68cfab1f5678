package e2e

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// joinStateViews are views whose joins keep more keys than the cache of
// TestJoinStateOutOfCache holds, with the query PostgreSQL answers for
// each: joins of tables (rows change and go) of every kind, and of
// streams (append-only sides, whose rows share pages).
var joinStateViews = []struct{ name, query string }{
	{"j_inner", "SELECT l.id AS lid, l.v, r.id AS rid, r.w FROM l JOIN r ON l.k = r.k"},
	{"j_left", "SELECT l.id AS lid, l.v, r.id AS rid, r.w FROM l LEFT JOIN r ON l.k = r.k"},
	{"j_full", "SELECT l.id AS lid, r.id AS rid, l.k AS lk, r.k AS rk FROM l FULL JOIN r ON l.k = r.k AND l.v <> r.w"},
	{"j_agg", "SELECT l.k, count(*) AS n, sum(r.id) AS s FROM l JOIN r ON l.k = r.k GROUP BY l.k"},
	{"j_streams", "SELECT a.k, a.x, b.y FROM sa a JOIN sb b ON a.k = b.k"},
}

// TestJoinStateOutOfCache runs random inserts, updates and deletes through
// joins that may keep only 2 join keys per side in memory, so that most
// rows that match are read back from Pebble, and compares every view
// with PostgreSQL's answer to its query after each round, after a kill -9
// and a restart, and after ROLLBACK TO SAVEPOINT (whose state PostgreSQL
// gets back by rolling back a transaction).
func TestJoinStateOutOfCache(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_JOIN_SEED")
	rng := rand.New(rand.NewPCG(seed, 18))
	pg := testutil.StartPostgres(t).Conn(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_STATE_CACHE_JOIN_KEYS_PER_SIDE=2"}})
	conn := srv.Conn(t)
	wantRows(t, conn, "SHOW state.cache.join-keys-per-side", "2")
	tables := []string{
		"CREATE TABLE l (id INT PRIMARY KEY, k INT, v VARCHAR)",
		"CREATE TABLE r (id INT PRIMARY KEY, k INT, w VARCHAR)",
	}
	exec(t, pg, tables...)
	exec(t, pg, "CREATE TABLE sa (k INT, x INT)", "CREATE TABLE sb (k INT, y INT)")
	exec(t, conn, tables...)
	exec(t, conn, "CREATE STREAM sa (k INT, x INT)", "CREATE STREAM sb (k INT, y INT)")
	for _, v := range joinStateViews {
		exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v.name, v.query))
	}

	nextX := 0
	round := func(n int) []string {
		var stmts []string
		for range n {
			tbl := "l"
			if rng.IntN(2) == 1 {
				tbl = "r"
			}
			id, k := rng.IntN(40), rng.IntN(30)
			val := fmt.Sprintf("'%c'", 'a'+rng.IntN(3))
			switch rng.IntN(5) {
			case 0:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE id = %d", tbl, id))
			case 1:
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET k = %d WHERE id = %d", tbl, k, id))
			case 2:
				s := []string{"sa", "sb"}[rng.IntN(2)]
				nextX++
				stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES (%d, %d)", s, rng.IntN(60), nextX))
			default:
				kv := fmt.Sprint(k)
				if rng.IntN(10) == 0 {
					kv = "NULL"
				}
				stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE id = %d", tbl, id),
					fmt.Sprintf("INSERT INTO %s VALUES (%d, %s, %s)", tbl, id, kv, val))
			}
		}
		return stmts
	}
	apply := func(stmts []string) {
		exec(t, conn, stmts...)
		exec(t, pg, stmts...)
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		for _, v := range joinStateViews {
			if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.query); diff != "" {
				t.Fatalf("seed %d, %s: view %s has %s", seed, when, v.name, diff)
			}
		}
	}
	for i := range 6 {
		apply(round(60))
		compare(fmt.Sprintf("round %d", i))
	}
	held := joinRowsHeld(t, srv, "j_streams")
	if stored := len(textRows(t, pg, "SELECT * FROM sa")) + len(textRows(t, pg, "SELECT * FROM sb")); held >= float64(stored) {
		t.Errorf("j_streams holds %v rows in memory of %d in its state: the cache of 2 keys per side evicted none", held, stored)
	}

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after kill -9")
	apply(round(60))
	compare("after kill -9 and a round")

	// ROLLBACK TO SAVEPOINT takes the views back to the savepoint's state
	// and the sources replay what came after: the views end as before.
	exec(t, conn, "SAVEPOINT before_round")
	apply(round(60))
	exec(t, conn, "ROLLBACK TO SAVEPOINT before_round")
	compare("after ROLLBACK TO SAVEPOINT and the replay")
	apply(round(60))
	compare("after ROLLBACK TO SAVEPOINT and a round")

	// In a transaction, the writes rolled back to a savepoint never reach
	// the views.
	done := round(20)
	for _, c := range []*pgx.Conn{conn, pg} {
		exec(t, c, "BEGIN")
		exec(t, c, done...)
		exec(t, c, "SAVEPOINT s")
	}
	undone := round(40)
	for _, c := range []*pgx.Conn{conn, pg} {
		exec(t, c, undone...)
		exec(t, c, "ROLLBACK TO SAVEPOINT s", "COMMIT")
	}
	compare("after a transaction's ROLLBACK TO SAVEPOINT")
}

// joinRowsHeld is the sum of streamdb_join_state_rows over view's joins.
func joinRowsHeld(t *testing.T, srv *testutil.Server, view string) float64 {
	t.Helper()
	f, ok := srv.Metrics(t)["streamdb_join_state_rows"]
	if !ok {
		t.Fatal("/metrics has no streamdb_join_state_rows")
	}
	var sum float64
	for _, m := range f.GetMetric() {
		if hasLabels(m, []string{"view", view}) {
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}
