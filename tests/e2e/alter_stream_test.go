package e2e

import (
	"fmt"
	"testing"

	"streamdb/tests/testutil"
)

// TestAlterStreamColumns: a producer publishes events before and after
// ALTER STREAM adds, renames and drops columns. Messages without an added
// column's member read its default; a renamed column keeps reading its
// member under the new name; views created before the changes keep
// running with their state, ALTER MATERIALIZED VIEW ... AS then uses the
// new column, and all of it holds across a restart.
func TestAlterStreamColumns(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		`CREATE STREAM ev (id int, amount int, note text) WITH (subject = 'alter.ev')`,
		`CREATE MATERIALIZED VIEW ev_total AS SELECT count(*) AS n, sum(amount) AS s FROM ev`,
		`CREATE MATERIALIZED VIEW ev_big AS SELECT id, amount FROM ev WHERE amount >= 20`)
	publishMany(t, js, "alter.ev", 3, func(i int) string {
		return fmt.Sprintf(`{"id": %d, "amount": %d, "note": "n%d"}`, i+1, 10*(i+1), i+1)
	})
	flush(t, conn)
	wantRows(t, conn, `SELECT n, s FROM ev_total`, "3 60")

	exec(t, conn, `ALTER STREAM ev ADD COLUMN region text DEFAULT 'eu', ADD COLUMN qty int`)
	// Producers add the field; older events and events without it read
	// the default, an explicit null stays NULL.
	publishMany(t, js, "alter.ev", 3, func(i int) string {
		switch i {
		case 0:
			return `{"id": 4, "amount": 40, "region": "us", "qty": 2}`
		case 1:
			return `{"id": 5, "amount": 50}`
		}
		return `{"id": 6, "amount": 60, "region": null, "qty": 1}`
	})
	flush(t, conn)
	wantRows(t, conn, `SELECT id, amount, region, qty FROM ev ORDER BY id`,
		"1 10 eu NULL", "2 20 eu NULL", "3 30 eu NULL", "4 40 us 2", "5 50 eu NULL", "6 60 NULL 1")
	wantRows(t, conn, `SELECT n, s FROM ev_total`, "6 210")

	// The column is renamed; producers keep writing "amount".
	exec(t, conn, `ALTER STREAM ev RENAME COLUMN amount TO price`)
	publishMany(t, js, "alter.ev", 1, func(int) string { return `{"id": 7, "amount": 70, "region": "ap"}` })
	exec(t, conn, `INSERT INTO ev (id, price, region) VALUES (8, 80, 'us')`)
	flush(t, conn)
	wantRows(t, conn, `SELECT id, price FROM ev WHERE id >= 6 ORDER BY id`, "6 60", "7 70", "8 80")
	wantRows(t, conn, `SELECT n, s FROM ev_total`, "8 360")
	wantRows(t, conn, `SELECT count(*), sum(amount) FROM ev_big`, "7 350")

	// A column a view reads cannot be dropped; one no view reads can.
	wantExecCode(t, conn, `ALTER STREAM ev DROP COLUMN price`, "2BP01")
	exec(t, conn, `ALTER STREAM ev DROP COLUMN note`)
	wantExecCode(t, conn, `ALTER STREAM ev ADD COLUMN amount int`, "42701")
	wantExecCode(t, conn, `ALTER STREAM ev ALTER COLUMN qty SET NOT NULL`, "0A000")
	wantRows(t, conn, `SELECT column_name FROM information_schema.columns WHERE table_name = 'ev' ORDER BY ordinal_position`,
		"id", "price", "region", "qty")

	// The view keeps its state and then reads the new column.
	exec(t, conn, `ALTER MATERIALIZED VIEW ev_total AS SELECT count(*) AS n, sum(price) AS s, count(*) FILTER (WHERE region = 'eu') AS eu FROM ev`)
	flush(t, conn)
	wantRows(t, conn, `SELECT n, s, eu FROM ev_total`, "8 360 4")

	srv.Restart(t)
	conn = srv.Conn(t)
	publishMany(t, js, "alter.ev", 1, func(int) string { return `{"id": 9, "amount": 90, "note": "gone"}` })
	flush(t, conn)
	wantRows(t, conn, `SELECT n, s, eu FROM ev_total`, "9 450 5")
	wantRows(t, conn, `SELECT count(*), sum(amount) FROM ev_big`, "8 440")
	wantRows(t, conn, `SELECT id, price, region, qty FROM ev WHERE id IN (1, 9) ORDER BY id`, "1 10 eu NULL", "9 90 eu NULL")
}

// TestAlterTableDuringTransaction: a transaction block that wrote a table
// whose columns another session changes before its COMMIT fails with
// 40001 and writes nothing; retried, it succeeds.
func TestAlterTableDuringTransaction(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, conn, `CREATE TABLE t (k int PRIMARY KEY, v text)`, `INSERT INTO t VALUES (1, 'a')`)
	exec(t, conn, `BEGIN`, `INSERT INTO t VALUES (2, 'b')`, `UPDATE t SET v = 'x' WHERE k = 1`)
	exec(t, other, `ALTER TABLE t ADD COLUMN c int DEFAULT 7`)
	wantExecCode(t, conn, `COMMIT`, "40001")
	wantRows(t, conn, `SELECT * FROM t ORDER BY k`, "1 a 7")
	exec(t, conn, `BEGIN`, `INSERT INTO t VALUES (2, 'b')`, `COMMIT`)
	wantRows(t, conn, `SELECT * FROM t ORDER BY k`, "1 a 7", "2 b 7")
}
