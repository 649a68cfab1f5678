package e2e

import (
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestBigCommitOneEpoch compares with PostgreSQL 15 a transaction large
// enough that the table's pipeline moves the epoch's writes into its
// batch several times before the barrier (300,000 rows inserted, half of
// them deleted and a third of them updated, in one commit): the later
// change of a key must win over the one moved earlier, for the rows, a
// secondary index and a view over the table.
func TestBigCommitOneEpoch(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, conn, "CREATE TABLE bc (k BIGINT PRIMARY KEY, v BIGINT, pad TEXT)",
		"CREATE MATERIALIZED VIEW bc_sum AS SELECT count(*) AS n, sum(v) AS total FROM bc")
	exec(t, pg, "CREATE TABLE bc (k BIGINT PRIMARY KEY, v BIGINT, pad TEXT)")
	stmts := []string{
		"CREATE INDEX bc_v ON bc (v)",
		"INSERT INTO bc VALUES (0, 0, 'before')",
		"BEGIN",
		"INSERT INTO bc SELECT g, g, repeat('p', 30) FROM generate_series(1, 300000) g",
		"DELETE FROM bc WHERE k % 2 = 0",
		"UPDATE bc SET v = -v WHERE k % 3 = 0",
		"COMMIT",
	}
	for _, s := range stmts {
		if err := testutil.ExecSimple(conn, 10*time.Minute, s); err != nil {
			t.Fatalf("streamdb: %s: %v", s, err)
		}
		if err := testutil.ExecSimple(pg, 10*time.Minute, s); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", s, err)
		}
	}
	for _, q := range []string{
		"SELECT count(*), sum(v), min(v), max(v) FROM bc",
		"SELECT k, v FROM bc WHERE k IN (0, 1, 2, 3, 4, 9, 299997, 299998, 299999, 300000) ORDER BY k",
		"SELECT k FROM bc WHERE v = -299997",
		"SELECT k FROM bc WHERE v = 299999",
		"SELECT count(*) FROM bc WHERE v = 150000",
	} {
		wantRows(t, conn, q, textRows(t, pg, q)...)
	}
	exec(t, conn, "FLUSH")
	wantRows(t, conn, "SELECT n, total FROM bc_sum", textRows(t, pg, "SELECT count(*), sum(v) FROM bc")...)
}
