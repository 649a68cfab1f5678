package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestForeignKeyChangesStream: UPDATEs and DELETEs of 20,000 rows (three
// batches of a streaming commit) on tables linked by foreign keys that
// used to hold every row they change stream: a statement whose foreign
// key fails at its end answers the RETURNING rows of its batches before
// the error, as only a streaming statement does (one that holds
// its rows fails before it answers any), and leaves nothing of it. The
// cases: an UPDATE that moves the primary key a foreign key references,
// UPDATE and DELETE of a table without a primary key that references
// another (the child) or is referenced by its UNIQUE column (the
// parent), and UPDATE and DELETE of a table referenced by a UNIQUE
// column that is not its primary key.
func TestForeignKeyChangesStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, 5*time.Minute)
	exec(t, conn,
		`CREATE TABLE p (k bigint PRIMARY KEY, v bigint)`,
		`INSERT INTO p SELECT g, g FROM generate_series(1, 20000) g`,
		`CREATE TABLE c (id bigint PRIMARY KEY, pk bigint REFERENCES p)`,
		`INSERT INTO c VALUES (1, 19990)`,
		// A child without a primary key, every row referencing p.
		`CREATE TABLE kc (pk bigint REFERENCES p, v bigint)`,
		`INSERT INTO kc SELECT g, g FROM generate_series(1, 20000) g`,
		// A parent without a primary key, referenced by its UNIQUE u.
		`CREATE TABLE kp (u bigint UNIQUE, v bigint)`,
		`INSERT INTO kp SELECT g, g FROM generate_series(1, 20000) g`,
		`CREATE TABLE kpc (id bigint PRIMARY KEY, u bigint REFERENCES kp (u))`,
		`INSERT INTO kpc VALUES (1, 19990)`,
		// A parent referenced by a UNIQUE column besides its key.
		`CREATE TABLE q (k bigint PRIMARY KEY, u bigint UNIQUE, v bigint)`,
		`INSERT INTO q SELECT g, g, g FROM generate_series(1, 20000) g`,
		`CREATE TABLE qc (id bigint PRIMARY KEY, u bigint REFERENCES q (u))`,
		`INSERT INTO qc VALUES (1, 19990)`,
	)
	sum := func(table, col string) int64 {
		t.Helper()
		var s int64
		if err := conn.QueryRow(ctx, `SELECT sum(`+col+`) FROM `+table).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name, sql, table, col string
	}{
		{"primary key moved", `UPDATE p SET k = k + 100000 RETURNING k`, "p", "k"},
		{"keyless child updated", `UPDATE kc SET pk = pk + 1 RETURNING pk`, "kc", "pk"},
		{"keyless parent's unique value moved", `UPDATE kp SET u = u + 100000 RETURNING u`, "kp", "u"},
		{"keyless parent deleted", `DELETE FROM kp WHERE v > 0 RETURNING u`, "kp", "u"},
		{"unique value moved", `UPDATE q SET u = u + 100000 RETURNING u`, "q", "u"},
		{"unique value deleted", `DELETE FROM q WHERE v > 0 RETURNING u`, "q", "u"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := sum(tc.table, tc.col)
			rows, err := conn.Query(ctx, tc.sql, pgx.QueryExecModeSimpleProtocol)
			answered := 0
			if err == nil {
				for rows.Next() {
					answered++
				}
				err = rows.Err()
			}
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23503" {
				t.Fatalf("%s: got %v, want a foreign key violation (23503)", tc.sql, err)
			}
			if answered == 0 {
				t.Errorf("%s answered no row before its error: it did not stream", tc.sql)
			}
			if got := sum(tc.table, tc.col); got != before {
				t.Errorf("after the failed %s, sum(%s) is %d, want %d", tc.sql, tc.col, got, before)
			}
		})
	}
}
