package e2e

import (
	"testing"
)

// TestBlockChangesStream checks that the UPDATEs and DELETEs of a
// transaction block that can stream do: with subqueries in SET and
// WHERE (uncorrelated, correlated, an IN over more keys than are looked
// up one by one), assigning the primary key, and on a table without a
// primary key that has a UNIQUE constraint. Each statement must move the server's
// streamdb_block_streamed_changes_total by one (a statement that
// silently held its rows would not), with the block spilling from its
// first statement, and the COMMIT must land what the block wrote. (The
// answers are compared with PostgreSQL, on 20,000-row tables, in
// sqllogic/testdata/pg/transaction_stream_subquery.slt and
// transaction_stream_keyless.slt; the expected rows here are
// PostgreSQL 15's.)
func TestBlockChangesStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE bst (k int PRIMARY KEY, g int NOT NULL, v bigint NOT NULL)",
		"INSERT INTO bst SELECT g, g % 10, g FROM generate_series(1, 3000) g",
		"CREATE TABLE bso (k int PRIMARY KEY, w int)",
		"INSERT INTO bso SELECT g, g FROM generate_series(1, 3000) g",
		"CREATE TABLE bsk (a bigint, u bigint UNIQUE, s text)",
		"INSERT INTO bsk SELECT g, g, 'row' FROM generate_series(1, 3000) g",
		// Groups of 1,000 rows in key order: a group past the first batch
		// reads the group before it, part of which the statement has
		// already changed (and spilled).
		"CREATE TABLE bsc (k int PRIMARY KEY, g int NOT NULL, v bigint NOT NULL)",
		"INSERT INTO bsc SELECT g, (g - 1) / 1000, g FROM generate_series(1, 10000) g",
		"CREATE TABLE bsm (k int PRIMARY KEY, v int)",
		"INSERT INTO bsm SELECT g, g FROM generate_series(1, 10000) g",
		"SET transaction_spill_memory = '1kB'")
	streamed := func() float64 {
		f, ok := srv.Metrics(t)["streamdb_block_streamed_changes_total"]
		if !ok || len(f.GetMetric()) != 1 {
			t.Fatal("the server has no streamdb_block_streamed_changes_total")
		}
		return f.GetMetric()[0].GetCounter().GetValue()
	}
	for _, c := range []struct {
		name  string
		block []string
		check string
		want  string
	}{
		{"uncorrelated subquery over the table", []string{
			"UPDATE bst SET v = v + 1",
			"UPDATE bst SET v = v + (SELECT max(v) FROM bst)",
		}, "SELECT count(*), sum(v) FROM bst", "3000 13507500"},
		{"correlated subquery over the table", []string{
			"UPDATE bst SET v = v - (SELECT min(v) FROM bst p WHERE p.g = bst.g)",
		}, "SELECT count(*), sum(v) FROM bst", "3000 4485000"},
		{"correlated subquery over rows the statement changed", []string{
			"UPDATE bsc SET v = v + (SELECT sum(v) FROM bsc p WHERE p.g = bsc.g - 1) WHERE g > 0",
		}, "SELECT count(*), sum(v) FROM bsc", "10000 40554505000"},
		{"subquery in WHERE", []string{
			"DELETE FROM bst WHERE v > (SELECT avg(v) FROM bst)",
		}, "SELECT count(*), sum(v) FROM bst", "1500 1117500"},
		{"IN subquery of many keys", []string{
			"DELETE FROM bso WHERE k IN (SELECT k * 2 FROM bso)",
		}, "SELECT count(*), sum(w) FROM bso", "1500 2250000"},
		// Every row onto its neighbour's key, which the scan reaches
		// later: held back, then into the block after the deletions (a
		// row put in before its key's holder left would be lost).
		{"primary key moves", []string{
			"UPDATE bsm SET k = k + 1",
			"UPDATE bsm SET k = -k",
		}, "SELECT count(*), sum(k), min(k), max(k), sum(v) FROM bsm", "10000 -50015000 -10001 -2 50005000"},
		{"unique keys without a primary key", []string{
			"UPDATE bsk SET u = u + 10000",
			"DELETE FROM bsk WHERE u % 2 = 0",
		}, "SELECT count(*), sum(u) FROM bsk", "1500 17250000"},
	} {
		exec(t, conn, "BEGIN")
		for _, stmt := range c.block {
			before := streamed()
			exec(t, conn, stmt)
			if after := streamed(); after != before+1 {
				t.Errorf("%s: %s did not stream into the block (streamdb_block_streamed_changes_total %v -> %v)", c.name, stmt, before, after)
			}
		}
		exec(t, conn, "COMMIT")
		wantRows(t, conn, c.check, c.want)
	}
}
