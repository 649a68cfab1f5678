package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestDeleteFKActionGraphsStream: a DELETE whose ON DELETE actions change
// tables that do not form a tree below it streams a batch at a time
// rather than holding its rows. A streaming statement with RETURNING
// answers each batch's rows before it commits, so one that fails at its
// end answers rows and then the error; a held one answers the error
// alone. For each shape (a table referencing itself with CASCADE, a
// diamond, a cycle) a DELETE of 10,000 of 20,000 rows whose action
// reaches a row that a table the statement does not change references
// must answer rows, then 23503, and leave every table as it was.
func TestDeleteFKActionGraphsStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, 10*time.Minute)

	// streamedThenFailed runs sql and returns the number of rows it
	// answered before its error, which must be a foreign key violation.
	streamedThenFailed := func(sql string) int {
		t.Helper()
		rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		var pgErr *pgconn.PgError
		if err := rows.Err(); !errors.As(err, &pgErr) || pgErr.Code != "23503" {
			t.Fatalf("%s: got %v after %d rows, want a 23503", sql, rows.Err(), n)
		}
		return n
	}
	count := func(sql string) string {
		t.Helper()
		return testutil.Scalar(t, conn, sql)
	}

	shapes := []struct {
		name   string
		setup  []string
		delete string
		counts string // every table's rows, unchanged by the failing DELETE
	}{{
		name: "self-reference",
		setup: []string{
			`CREATE TABLE es (k bigint PRIMARY KEY, boss bigint REFERENCES es ON DELETE CASCADE)`,
			`CREATE INDEX es_boss ON es (boss)`,
			`INSERT INTO es SELECT g, NULLIF(g / 2, 0) FROM generate_series(1, 20000) g`,
			// 19999's bosses: 9999, 4999, ..., 19, 9.
			`CREATE TABLE esx (k bigint PRIMARY KEY, e bigint REFERENCES es)`,
			`INSERT INTO esx VALUES (1, 19999)`,
		},
		delete: `DELETE FROM es WHERE k % 2 = 0 RETURNING k`,
		counts: `SELECT (SELECT count(*) FROM es)::text || ' ' || (SELECT count(boss) FROM es)::text`,
	}, {
		name: "diamond",
		setup: []string{
			`CREATE TABLE dp (k bigint PRIMARY KEY)`,
			`CREATE TABLE dl (k bigint PRIMARY KEY, p bigint REFERENCES dp ON DELETE CASCADE)`,
			`CREATE TABLE dr (k bigint PRIMARY KEY, p bigint REFERENCES dp ON DELETE CASCADE)`,
			`CREATE TABLE db (k bigint PRIMARY KEY, l bigint REFERENCES dl ON DELETE CASCADE, r bigint REFERENCES dr ON DELETE SET NULL)`,
			`INSERT INTO dp SELECT g FROM generate_series(1, 20000) g`,
			`INSERT INTO dl SELECT g, g FROM generate_series(1, 20000) g`,
			`INSERT INTO dr SELECT g, 20001 - g FROM generate_series(1, 20000) g`,
			`INSERT INTO db SELECT g, g, 20001 - g FROM generate_series(1, 20000) g`,
			`CREATE TABLE dbx (k bigint PRIMARY KEY, b bigint REFERENCES db)`,
			`INSERT INTO dbx VALUES (1, 19998)`,
		},
		delete: `DELETE FROM dp WHERE k % 2 = 0 RETURNING k`,
		counts: `SELECT (SELECT count(*) FROM dl)::text || ' ' || (SELECT count(*) FROM db)::text || ' ' || (SELECT count(r) FROM db)::text`,
	}, {
		name: "cycle",
		setup: []string{
			`CREATE TABLE ca (k bigint PRIMARY KEY, b bigint)`,
			`CREATE TABLE cb (k bigint PRIMARY KEY, a bigint REFERENCES ca ON DELETE CASCADE)`,
			`ALTER TABLE ca ADD FOREIGN KEY (b) REFERENCES cb ON DELETE CASCADE`,
			`INSERT INTO ca SELECT g, NULL::bigint FROM generate_series(1, 20000) g`,
			`INSERT INTO cb SELECT g, 20001 - g FROM generate_series(1, 20000) g`,
			`UPDATE ca SET b = k`,
			`CREATE TABLE cx (k bigint PRIMARY KEY, b bigint REFERENCES cb)`,
			// cb 19999 goes with ca 2, which the DELETE deletes.
			`INSERT INTO cx VALUES (1, 19999)`,
		},
		delete: `DELETE FROM ca WHERE k % 2 = 0 RETURNING k`,
		counts: `SELECT (SELECT count(*) FROM ca)::text || ' ' || (SELECT count(*) FROM cb)::text`,
	}}
	for _, sh := range shapes {
		exec(t, conn, sh.setup...)
		before := count(sh.counts)
		if n := streamedThenFailed(sh.delete); n == 0 {
			t.Errorf("%s: the DELETE answered no row before its error: it held its rows instead of streaming", sh.name)
		}
		if after := count(sh.counts); after != before {
			t.Errorf("%s: the failed DELETE changed the tables: %s, want %s", sh.name, after, before)
		}
	}
}
