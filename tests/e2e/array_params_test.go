package e2e

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lib/pq"

	"streamdb/tests/testutil"
)

// TestArrayParameters: Go slices bind as array parameters and read back
// as slices, through pgx (binary parameters and results) and lib/pq
// (pq.Array: text), in a cast ($1::int8[]), in = ANY ($1), into an
// array column, and through pgx's CopyFrom (binary COPY).
func TestArrayParameters(t *testing.T) {
	srv := startServer(t)
	ctx := testutil.Context(t, 2*time.Minute)
	conn := srv.Conn(t)
	exec(t, conn, `CREATE TABLE items (id int PRIMARY KEY, tags text[], ns bigint[])`,
		`INSERT INTO items VALUES (1, '{a}', '{1}'), (2, '{b,c}', '{2,3}'), (3, NULL, NULL)`)

	var i8 []int64
	if err := conn.QueryRow(ctx, `SELECT $1::int8[]`, []int64{1, -2, 1 << 40}).Scan(&i8); err != nil || !slices.Equal(i8, []int64{1, -2, 1 << 40}) {
		t.Errorf("pgx $1::int8[]: %v, %v", i8, err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM items WHERE id = ANY ($1)`, []int64{1, 3, 7}).Scan(&n); err != nil || n != 2 {
		t.Errorf("pgx = ANY ($1): %d, %v", n, err)
	}
	var strs []string
	if err := conn.QueryRow(ctx, `SELECT $1::text[] || 'z'::text`, []string{"a b", "", "NULL"}).Scan(&strs); err != nil || !slices.Equal(strs, []string{"a b", "", "NULL", "z"}) {
		t.Errorf("pgx $1::text[]: %q, %v", strs, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO items VALUES ($1, $2, $3)`, 4, []string{"x", "y"}, []int64{4, 5}); err != nil {
		t.Fatal(err)
	}
	var tags []string
	var ns []int64
	if err := conn.QueryRow(ctx, `SELECT tags, ns FROM items WHERE tags @> $1`, []string{"y"}).Scan(&tags, &ns); err != nil ||
		!slices.Equal(tags, []string{"x", "y"}) || !slices.Equal(ns, []int64{4, 5}) {
		t.Errorf("pgx array columns: %q %v, %v", tags, ns, err)
	}
	// pgx's CopyFrom sends arrays in COPY's binary format.
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"id", "tags", "ns"},
		pgx.CopyFromRows([][]any{{10, []string{"c d", "e"}, []int64{-1}}, {11, []string{}, nil}})); err != nil {
		t.Fatal(err)
	}
	if got := testutil.SortedRows(t, conn, `SELECT id, tags, ns, cardinality(tags) FROM items WHERE id >= 10`); strings.Join(got, ";") != `10|{"c d",e}|{-1}|2;11|{}|NULL|0` {
		t.Errorf("pgx CopyFrom with arrays: %q", got)
	}

	db, err := sql.Open("postgres", srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var back []int64
	if err := db.QueryRowContext(ctx, `SELECT $1::int8[]`, pq.Array([]int64{7, 8})).Scan(pq.Array(&back)); err != nil || !slices.Equal(back, []int64{7, 8}) {
		t.Errorf("lib/pq $1::int8[]: %v, %v", back, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM items WHERE id = ANY ($1)`, pq.Array([]int64{2, 4})).Scan(&n); err != nil || n != 2 {
		t.Errorf("lib/pq = ANY ($1): %d, %v", n, err)
	}
	var got []sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT array_append($1::text[], NULL)`, pq.Array([]string{"q\"x", "a,b"})).Scan(pq.Array(&got)); err != nil ||
		len(got) != 3 || got[0].String != `q"x` || got[1].String != "a,b" || got[2].Valid {
		t.Errorf("lib/pq text[]: %v, %v", got, err)
	}
}
