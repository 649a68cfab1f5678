package e2e

import (
	"strings"
	"testing"
)

// TestViewScalarSubqueriesLikePostgres: a materialized view with
// uncorrelated scalar subqueries that are one aggregate row (in WHERE, in
// the select list, over the same and another table, nested) equals a
// PostgreSQL view of the same query through inserts, updates and deletes
// that change the aggregates, down to an empty subquery input; EXPLAIN
// shows the join that runs them; the subqueries a view cannot run
// incrementally (one that may give several rows, a correlation that a
// NULL outer value could satisfy) are refused with 0A000. (EXISTS, IN and
// correlated aggregates: view_semijoin_test.go.)
func TestViewScalarSubqueriesLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	execBoth(t, sdb, ref,
		"CREATE TABLE vs (id int PRIMARY KEY, g int, v int)",
		"CREATE TABLE lim (id int PRIMARY KEY, m int)",
		"INSERT INTO vs VALUES (1, 1, 10), (2, 1, 20), (3, 2, NULL), (4, 2, 5), (5, 3, 7)",
		"INSERT INTO lim VALUES (1, 6)")
	views := map[string]string{
		"vs_above": "SELECT id, v FROM vs WHERE v > (SELECT avg(v) FROM vs)",
		"vs_diff":  "SELECT id, v - (SELECT min(v) FROM vs) AS d, (SELECT count(*) FROM lim) AS n FROM vs",
		"vs_lim":   "SELECT g, count(*) AS c FROM vs WHERE v >= (SELECT max(m) FROM lim) GROUP BY g",
		"vs_nest":  "SELECT id FROM vs WHERE v < (SELECT max(v) FROM vs WHERE v < (SELECT max(v) FROM vs))",
	}
	for name, q := range views {
		exec(t, sdb, "CREATE MATERIALIZED VIEW "+name+" AS "+q)
		if _, err := ref.Exec(ctx, "CREATE VIEW "+name+" AS "+q); err != nil {
			t.Fatal(err)
		}
	}
	check := func() {
		t.Helper()
		flush(t, sdb)
		for name := range views {
			sameRowsAsPostgres(t, sdb, ref, "SELECT * FROM "+name)
		}
	}
	check()
	execBoth(t, sdb, ref, "INSERT INTO vs VALUES (6, 3, 30), (7, 1, 1)", "UPDATE lim SET m = 8 WHERE id = 1")
	check()
	execBoth(t, sdb, ref, "DELETE FROM vs WHERE id IN (2, 6)", "INSERT INTO lim VALUES (2, 9)", "UPDATE vs SET v = 40 WHERE id = 3")
	check()
	execBoth(t, sdb, ref, "DELETE FROM lim", "DELETE FROM vs WHERE v < 10")
	check()
	plan := strings.Join(textRows(t, sdb, "EXPLAIN CREATE MATERIALIZED VIEW vs_x AS "+views["vs_above"]), "\n")
	if !strings.Contains(plan, "Join inner on [1 = 1]") || !strings.Contains(plan, "StreamAggregate group=[] aggs=[avg(v)]") {
		t.Errorf("EXPLAIN does not show the subquery joined as an aggregate:\n%s", plan)
	}
	for _, q := range []string{
		"SELECT id, (SELECT m FROM lim) FROM vs",
		"SELECT id FROM vs WHERE v > (SELECT max(m) FROM lim GROUP BY id)",
		"SELECT id, (SELECT m FROM lim WHERE lim.id = vs.g) FROM vs",
	} {
		_, err := sdb.Exec(ctx, "CREATE MATERIALIZED VIEW vs_bad AS "+q)
		wantCode(t, err, "0A000")
	}
}
