package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// The SELECT-language tests run the same statements against streamdb and
// a PostgreSQL 15 and compare the answers.

// startWithPostgres starts a streamdb server and a PostgreSQL and returns a
// connection to each (sdb, ref) and a context that ends with the test.
func startWithPostgres(t *testing.T) (sdb, ref *pgx.Conn, ctx context.Context) {
	t.Helper()
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	ctx = testutil.Context(t, 2*time.Minute)
	sdb = srv.Conn(t)
	ref, err := pgx.Connect(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close(context.Background()) })
	return sdb, ref, ctx
}

// execBoth runs statements on streamdb and PostgreSQL, failing the test on
// the first error of either.
func execBoth(t *testing.T, sdb, ref *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		exec(t, sdb, q)
		if _, err := ref.Exec(context.Background(), q); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
	}
}

// sameRowsAsPostgres checks that each query gives PostgreSQL's rows, in
// any order.
func sameRowsAsPostgres(t *testing.T, sdb, ref *pgx.Conn, queries ...string) {
	t.Helper()
	for _, q := range queries {
		want := testutil.SortedRows(t, ref, q)
		got := testutil.SortedRows(t, sdb, q)
		if strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("%s\n got %v\nwant %v (PostgreSQL)", q, got, want)
		}
	}
}

// sameEffectAsPostgres runs write stmt in a transaction on both servers,
// checks that it affects as many rows as in PostgreSQL and that check
// then gives PostgreSQL's rows, and rolls both back.
func sameEffectAsPostgres(t *testing.T, sdb, ref *pgx.Conn, stmt, check string) {
	t.Helper()
	ctx := context.Background()
	results := make([][]string, 2)
	affected := make([]int64, 2)
	for i, c := range []*pgx.Conn{sdb, ref} {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := tx.Exec(ctx, stmt)
		if err != nil {
			t.Fatalf("%s (server %d of streamdb, PostgreSQL): %v", stmt, i+1, err)
		}
		affected[i] = tag.RowsAffected()
		results[i] = testutil.SortedRows(t, tx.Conn(), check)
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if affected[0] != affected[1] {
		t.Errorf("%s: %d rows, want %d (PostgreSQL)", stmt, affected[0], affected[1])
	}
	if strings.Join(results[0], ";") != strings.Join(results[1], ";") {
		t.Errorf("after %s: %s\n got %v\nwant %v (PostgreSQL)", stmt, check, results[0], results[1])
	}
}
