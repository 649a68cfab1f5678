package e2e

import (
	"testing"
)

// TestWithRecursiveLikePostgres: WITH RECURSIVE in ad-hoc queries gives
// PostgreSQL's rows, with UNION ALL keeping every row and UNION ending a
// cycle by dropping rows seen before; malformed recursions fail with
// PostgreSQL's SQLSTATE; a recursion that never ends stops with 54000;
// a view refuses WITH RECURSIVE with 0A000.
func TestWithRecursiveLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	var err error
	execBoth(t, sdb, ref,
		"CREATE TABLE edges (id int PRIMARY KEY, parent int, child int)",
		// A tree 1 -> 2, 3; 2 -> 4; 4 -> 5, and a cycle 6 -> 7 -> 6.
		"INSERT INTO edges VALUES (1, 1, 2), (2, 1, 3), (3, 2, 4), (4, 4, 5), (5, 6, 7), (6, 7, 6)",
	)
	sameRowsAsPostgres(t, sdb, ref,
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT n, n * n FROM r",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n % 3 + 1 FROM r) SELECT * FROM r",
		"WITH RECURSIVE fib(a, b) AS (SELECT 0::bigint, 1::bigint UNION ALL SELECT b, a + b FROM fib WHERE b < 1000) SELECT a FROM fib",
		// Descendants of 1, with their depth.
		"WITH RECURSIVE d(node, depth) AS (SELECT 1, 0 UNION ALL SELECT e.child, d.depth + 1 FROM d JOIN edges e ON e.parent = d.node) SELECT * FROM d",
		// A cycle ends under UNION.
		"WITH RECURSIVE d(node) AS (SELECT 6 UNION SELECT e.child FROM d JOIN edges e ON e.parent = d.node) SELECT * FROM d",
		// Aggregates over the recursion, and a recursion in a subquery.
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) SELECT count(*), sum(n), max(n) FROM r",
		"SELECT id FROM edges WHERE child IN (WITH RECURSIVE d(node) AS (SELECT 2 UNION ALL SELECT e.child FROM d JOIN edges e ON e.parent = d.node) SELECT node FROM d)",
		// A non-recursive term of two queries.
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT n + 2 FROM r WHERE n < 9) SELECT * FROM r",
	)
	for q, code := range map[string]string{
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1.5 FROM r WHERE n < 5) SELECT * FROM r": "42804",
		"WITH RECURSIVE r(n) AS (SELECT n FROM r) SELECT * FROM r":                                      "42P19",
		// (A UNION ALL B) UNION ALL C: B is in the non-recursive term.
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n * 2 FROM r WHERE n < 50 UNION ALL SELECT n * 3 FROM r WHERE n < 50) SELECT n FROM r": "42P19",
	} {
		_, err := sdb.Exec(ctx, q)
		wantCode(t, err, code)
		_, err = ref.Exec(ctx, q)
		wantCode(t, err, code)
	}
	_, err = sdb.Exec(ctx, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r")
	wantCode(t, err, "54000")
	_, err = sdb.Exec(ctx, "CREATE MATERIALIZED VIEW rec_v AS WITH RECURSIVE d(node) AS (SELECT parent FROM edges UNION ALL SELECT e.child FROM d JOIN edges e ON e.parent = d.node) SELECT * FROM d")
	wantCode(t, err, "0A000")
	// The server keeps serving.
	wantRows(t, sdb, "SELECT count(*) FROM edges", "6")
}
