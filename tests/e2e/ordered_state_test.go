package e2e

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"streamdb/tests/testutil"
)

// orderedStateViews are top-Ns and min/max over a table whose rows change
// and go (so their state keeps every row, not only the ranked ones), with
// the query PostgreSQL answers for each.
var orderedStateViews = []struct{ name, query string }{
	{"o_top", "SELECT id, v FROM ot ORDER BY v DESC, id LIMIT 5"},
	{"o_top_offset", "SELECT id, v FROM ot ORDER BY v, id LIMIT 3 OFFSET 2"},
	{"o_per_g", "SELECT g, id, v, rn FROM (SELECT g, id, v, row_number() OVER (PARTITION BY g ORDER BY v, id) AS rn FROM ot) x WHERE rn <= 2"},
	{"o_rank", "SELECT g, v, r FROM (SELECT g, v, rank() OVER (PARTITION BY g ORDER BY v DESC) AS r FROM ot) x WHERE r <= 2"},
	{"o_counts", "SELECT g, c FROM (SELECT g, count(*) AS c FROM ot GROUP BY g) x ORDER BY c DESC, g LIMIT 3"},
	{"o_minmax", "SELECT g, min(v) AS lo, max(v) AS hi, count(*) AS n FROM ot GROUP BY g"},
	{"o_minmax_all", "SELECT min(v) AS lo, max(v * 2 + g) AS hi, min(CAST(v AS numeric) / 4) AS q FROM ot"},
	// A top-N over a keyed view reads that view's changes, a set.
	{"o_top_of_view", "SELECT id, g, s FROM o_sums ORDER BY s DESC, id LIMIT 4"},
}

// orderedStateBase is a view that orderedStateViews read: a materialized
// view in streamdb, a plain one in PostgreSQL.
const orderedStateBase = "o_sums AS SELECT id, g, sum(v) AS s FROM ot GROUP BY id, g"

// TestOrderedStateOutOfCache runs random inserts, updates and deletes
// through top-Ns whose caches keep 2 rows per operator and min/max whose
// aggregates keep 2 groups (their values are in Pebble, one key each), so
// that retractions from the top are answered from Pebble, and compares
// every view with PostgreSQL's answer to its query after each round and
// after a kill -9 and a restart.
func TestOrderedStateOutOfCache(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_ORDERED_SEED")
	rng := rand.New(rand.NewPCG(seed, 3))
	pg := testutil.StartPostgres(t).Conn(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_STATE_CACHE_TOPN_ROWS_PER_OPERATOR=2", "STREAMDB_STATE_CACHE_GROUPS_PER_OPERATOR=2"}})
	conn := srv.Conn(t)
	wantRows(t, conn, "SHOW state.cache.topn-rows-per-operator", "2")
	table := "CREATE TABLE ot (id INT PRIMARY KEY, g INT, v INT)"
	exec(t, pg, table)
	exec(t, conn, table)
	exec(t, pg, "CREATE VIEW "+orderedStateBase)
	exec(t, conn, "CREATE MATERIALIZED VIEW "+orderedStateBase)
	for _, v := range orderedStateViews {
		exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v.name, v.query))
	}
	round := func(n int) []string {
		var stmts []string
		for range n {
			id, g, v := rng.IntN(60), rng.IntN(4), rng.IntN(100)
			switch rng.IntN(4) {
			case 0:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM ot WHERE id = %d", id))
			case 1:
				stmts = append(stmts, fmt.Sprintf("UPDATE ot SET v = %d WHERE id = %d", v, id))
			default:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM ot WHERE id = %d", id),
					fmt.Sprintf("INSERT INTO ot VALUES (%d, %d, %d)", id, g, v))
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
		for _, v := range orderedStateViews {
			if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.query); diff != "" {
				t.Fatalf("seed %d, %s: view %s has %s", seed, when, v.name, diff)
			}
		}
	}
	for i := range 5 {
		apply(round(80))
		compare(fmt.Sprintf("round %d", i))
	}
	// o_top's whole input is one partition of up to 60 rows; with a cache
	// of 2 rows it keeps its 5 ranked rows and the next one (the cache
	// cuts a partition down to those, not below).
	if held := stateRowsHeld(t, srv, "streamdb_topn_state_rows", "o_top"); held > 6 {
		t.Errorf("o_top holds %v rows in memory: the cache of 2 rows evicted too few", held)
	}

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after kill -9")
	apply(round(80))
	compare("after kill -9 and a round")
}

// stateRowsHeld is the sum of a state gauge (metric) over view's
// operators.
func stateRowsHeld(t *testing.T, srv *testutil.Server, metric, view string) float64 {
	t.Helper()
	f, ok := srv.Metrics(t)[metric]
	if !ok {
		t.Fatalf("/metrics has no %s", metric)
	}
	var sum float64
	for _, m := range f.GetMetric() {
		if hasLabels(m, []string{"view", view}) {
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

// TestExtremaOfCloseNumerics: min and max over a table's numerics that a
// float64 cannot tell apart (keys order numerics by a float64 prefix
// only), through deletes of the current extreme, against PostgreSQL.
func TestExtremaOfCloseNumerics(t *testing.T) {
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	table := "CREATE TABLE cn (id INT PRIMARY KEY, g INT, x NUMERIC)"
	exec(t, pg, table)
	exec(t, conn, table)
	const query = "SELECT g, min(x) AS lo, max(x) AS hi, count(*) AS n FROM cn GROUP BY g"
	exec(t, conn, "CREATE MATERIALIZED VIEW cn_ext AS "+query)
	// Within each sign, the values share one float64 and their texts sort
	// unlike their values (9.9... after 10.0..., -1.2 after -1.1...).
	vals := []string{
		"10.000000000000000000001", "9.9999999999999999999999", "10.0000000000000000000005", "9.99999999999999999999995",
		"-1.10000000000000000001", "-1.1000000000000000000099", "-1.100000000000000000005", "-1.1",
	}
	var stmts []string
	for i, v := range vals {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO cn VALUES (%d, %d, %s)", i, i/4, v))
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		if diff := testutil.RowsDiff(t, conn, "SELECT * FROM cn_ext", pg, query); diff != "" {
			t.Fatalf("%s: cn_ext has %s", when, diff)
		}
	}
	exec(t, conn, stmts...)
	exec(t, pg, stmts...)
	compare("after the inserts")
	// Delete the extremes one by one, so each new one comes from state.
	for _, id := range []int{0, 1, 4, 5, 2, 6} {
		del := fmt.Sprintf("DELETE FROM cn WHERE id = %d", id)
		exec(t, conn, del)
		exec(t, pg, del)
		compare(del)
	}
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	ins := "INSERT INTO cn VALUES (10, 0, 9.99999999999999999999999), (11, 1, -1.1000000000000000000000001)"
	exec(t, conn, ins)
	exec(t, pg, ins)
	compare("after kill -9 and inserts")
}
