package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestReturningParametersLikePostgres: $n parameters in the RETURNING
// list of INSERT (VALUES, SELECT, ON CONFLICT DO UPDATE), UPDATE (with
// and without FROM) and DELETE, over the extended protocol, alone or
// shared with the statement's body, in a subquery there, in a cast and
// untyped, inside a transaction block, and a prepared statement run
// twice with different values. Each statement runs on streamdb and on
// PostgreSQL 15; the parameter types, result column types and rows must
// be the same.
func TestReturningParametersLikePostgres(t *testing.T) {
	sdb, ref, ctx := startWithPostgres(t)
	execBoth(t, sdb, ref,
		`CREATE TABLE rp_t (k int PRIMARY KEY, a int, b text)`,
		`CREATE TABLE rp_u (uk int, w int)`,
		`INSERT INTO rp_u VALUES (1, 7), (2, 8), (3, 9)`)
	steps := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO rp_t VALUES ($1, $2, $3) RETURNING k, a + $4, b || $5::text, $2 * 10, $6`,
			[]any{1, 10, "one", 5, "!", "untyped"}},
		{`INSERT INTO rp_t VALUES ($1, $2, $3) RETURNING k, a + $4, b || $5::text, $2 * 10, $6`,
			[]any{2, 20, "two", 6, "?", "again"}},
		{`INSERT INTO rp_t SELECT uk + $1, w, 'sel' FROM rp_u RETURNING k, (SELECT count(*) FROM rp_u WHERE w > $2) AS n, k * $3`,
			[]any{10, 7, 2}},
		{`UPDATE rp_t SET a = a + $1 WHERE k = $2 RETURNING k, a, a - $1 AS was, $3::int + k`,
			[]any{100, 1, 1000}},
		{`UPDATE rp_t SET a = u.w FROM rp_u u WHERE u.uk + 10 = rp_t.k AND u.w >= $1 RETURNING rp_t.k, u.w + $2, $3::text || rp_t.b`,
			[]any{8, 1, "from:"}},
		{`INSERT INTO rp_t VALUES ($1, 0, 'x') ON CONFLICT (k) DO UPDATE SET a = rp_t.a + $2 RETURNING k, a, a * $3`,
			[]any{2, 3, 2}},
		{`DELETE FROM rp_t WHERE k = $1 RETURNING k, b || $2, (SELECT max(w) FROM rp_u WHERE w < $3)`,
			[]any{11, "-gone", 9}},
	}
	for _, st := range steps {
		got := returningRun(t, ctx, sdb, st.sql, st.args)
		want := returningRun(t, ctx, ref, st.sql, st.args)
		if got != want {
			t.Errorf("%s %v\n got %s\nwant %s (PostgreSQL)", st.sql, st.args, got, want)
		}
	}
	// Inside a transaction block, then rolled back.
	for _, c := range []*pgx.Conn{sdb, ref} {
		if _, err := c.Exec(ctx, `BEGIN`); err != nil {
			t.Fatal(err)
		}
	}
	block := `INSERT INTO rp_t VALUES ($1, $2, 'blk') RETURNING k + $3, (SELECT count(*) FROM rp_t WHERE a >= $2)`
	if got, want := returningRun(t, ctx, sdb, block, []any{50, 1, 1000}), returningRun(t, ctx, ref, block, []any{50, 1, 1000}); got != want {
		t.Errorf("in a block: %s\n got %s\nwant %s (PostgreSQL)", block, got, want)
	}
	for _, c := range []*pgx.Conn{sdb, ref} {
		if _, err := c.Exec(ctx, `ROLLBACK`); err != nil {
			t.Fatal(err)
		}
	}
	sameRowsAsPostgres(t, sdb, ref, `SELECT * FROM rp_t`)
}

// returningRun prepares q on c (its parameter and column types), runs it
// with args over the extended protocol and describes all three, rows
// sorted.
func returningRun(t *testing.T, ctx context.Context, c *pgx.Conn, q string, args []any) string {
	t.Helper()
	sd, err := c.Prepare(ctx, "", q)
	if err != nil {
		return "prepare: " + err.Error()
	}
	var cols []string
	for _, f := range sd.Fields {
		cols = append(cols, fmt.Sprintf("%s:%d", f.Name, f.DataTypeOID))
	}
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return "query: " + err.Error()
	}
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		return "run: " + err.Error()
	}
	slices.Sort(out)
	return fmt.Sprintf("params %v cols [%s] rows [%s] tag %s", sd.ParamOIDs, strings.Join(cols, " "), strings.Join(out, "; "), rows.CommandTag())
}
