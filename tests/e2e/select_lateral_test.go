package e2e

import (
	"testing"
)

// TestLateralLikePostgres: LATERAL subqueries in FROM that name columns
// of the items before them (comma, JOIN ... ON, LEFT JOIN ... ON true,
// with aggregates, LIMIT and a column list) give PostgreSQL's rows; a view
// refuses a LATERAL whose correlation a NULL outer value may satisfy with
// 0A000.
func TestLateralLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	var err error
	execBoth(t, sdb, ref,
		"CREATE TABLE lt (a int PRIMARY KEY, b int)",
		"INSERT INTO lt VALUES (1, 10), (2, 20), (3, NULL), (4, 20)",
	)
	sameRowsAsPostgres(t, sdb, ref,
		"SELECT * FROM (SELECT 1 AS a) s, LATERAL (SELECT s.a + 1 AS b) l",
		"SELECT lt.a, l.x FROM lt, LATERAL (SELECT u.b AS x FROM lt AS u WHERE u.a <= lt.a) l",
		"SELECT lt.a, l.x FROM lt LEFT JOIN LATERAL (SELECT u.b AS x FROM lt AS u WHERE u.a < lt.a) l ON true",
		"SELECT lt.a, l.n, l.m FROM lt JOIN LATERAL (SELECT count(*) AS n, max(u.b) AS m FROM lt AS u WHERE u.a > lt.a) l ON l.n > 1",
		"SELECT lt.a, l.x FROM lt, LATERAL (SELECT u.a AS x FROM lt AS u WHERE u.b = lt.b ORDER BY u.a DESC LIMIT 1) l",
		"SELECT lt.a, l.p, l.q FROM lt, LATERAL (SELECT lt.a * 2, lt.b + 1) AS l(p, q)",
		"SELECT count(*) FROM lt, LATERAL (SELECT u.a FROM lt AS u WHERE u.a <> lt.a) l WHERE l.a > 1",
	)
	_, err = sdb.Exec(ctx, "CREATE MATERIALIZED VIEW lat_v AS SELECT lt.a, l.x FROM lt, LATERAL (SELECT u.b AS x FROM lt AS u WHERE u.a <= lt.a OR lt.b IS NULL) l")
	wantCode(t, err, "0A000")
}
