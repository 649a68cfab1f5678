package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestLateralLikePostgres: LATERAL subqueries in FROM that name columns
// of the items before them (comma, JOIN ... ON, LEFT JOIN ... ON true,
// with aggregates, LIMIT and a column list) give PostgreSQL's rows; a view
// refuses a correlated LATERAL with 0A000.
func TestLateralLikePostgres(t *testing.T) {
	t.Parallel()
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	ctx := testCtx(t, 2*time.Minute)
	sdb := srv.Conn(t)
	ref, err := pgx.Connect(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close(context.Background())
	for _, q := range []string{
		"CREATE TABLE lt (a int PRIMARY KEY, b int)",
		"INSERT INTO lt VALUES (1, 10), (2, 20), (3, NULL), (4, 20)",
	} {
		exec(t, sdb, q)
		if _, err := ref.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
	}
	for _, q := range []string{
		"SELECT * FROM (SELECT 1 AS a) s, LATERAL (SELECT s.a + 1 AS b) l",
		"SELECT lt.a, l.x FROM lt, LATERAL (SELECT u.b AS x FROM lt AS u WHERE u.a <= lt.a) l",
		"SELECT lt.a, l.x FROM lt LEFT JOIN LATERAL (SELECT u.b AS x FROM lt AS u WHERE u.a < lt.a) l ON true",
		"SELECT lt.a, l.n, l.m FROM lt JOIN LATERAL (SELECT count(*) AS n, max(u.b) AS m FROM lt AS u WHERE u.a > lt.a) l ON l.n > 1",
		"SELECT lt.a, l.x FROM lt, LATERAL (SELECT u.a AS x FROM lt AS u WHERE u.b = lt.b ORDER BY u.a DESC LIMIT 1) l",
		"SELECT lt.a, l.p, l.q FROM lt, LATERAL (SELECT lt.a * 2, lt.b + 1) AS l(p, q)",
		"SELECT count(*) FROM lt, LATERAL (SELECT u.a FROM lt AS u WHERE u.a <> lt.a) l WHERE l.a > 1",
	} {
		want := testutil.SortedRows(t, ref, q)
		got := testutil.SortedRows(t, sdb, q)
		if strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("%s\n got %v\nwant %v (PostgreSQL)", q, got, want)
		}
	}
	_, err = sdb.Exec(ctx, "CREATE MATERIALIZED VIEW lat_v AS SELECT lt.a, l.x FROM lt, LATERAL (SELECT u.b AS x FROM lt AS u WHERE u.a <= lt.a) l")
	wantCode(t, err, "0A000")
}
