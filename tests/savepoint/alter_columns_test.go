package savepoint

import (
	"slices"
	"testing"

	"streamdb/tests/testutil"
)

// TestRollbackUndoesAlterColumns: ROLLBACK TO SAVEPOINT taken before
// ALTER TABLE and ALTER STREAM change columns restores the old columns in
// the catalog, the table's rows in their old shape (the rows written
// since, which a table keeps across a rollback, read under the old
// columns) and the views over them, which keep running.
func TestRollbackUndoesAlterColumns(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		`CREATE TABLE acct (id int PRIMARY KEY, name text, bal int)`,
		`INSERT INTO acct VALUES (1, 'ann', 10), (2, 'bob', 20)`,
		`CREATE STREAM ev (id int, amount int) WITH (subject = 'sp.alter.ev')`,
		`INSERT INTO ev VALUES (1, 5)`,
		`CREATE MATERIALIZED VIEW acct_sum AS SELECT count(*) AS n, sum(bal) AS s FROM acct`,
		`CREATE MATERIALIZED VIEW ev_sum AS SELECT count(*) AS n, sum(amount) AS s FROM ev`,
		`FLUSH`,
		`SAVEPOINT before_alter`)
	columns := `SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_name IN ('acct', 'ev') ORDER BY table_name, ordinal_position`
	old := mustRows(t, conn, columns)

	testutil.MustExec(t, conn,
		`ALTER TABLE acct ADD COLUMN tier text DEFAULT 'basic', DROP COLUMN name`,
		`ALTER TABLE acct RENAME COLUMN bal TO balance`,
		`ALTER STREAM ev ADD COLUMN region text DEFAULT 'eu'`,
		`ALTER STREAM ev RENAME COLUMN amount TO price`,
		`INSERT INTO acct VALUES (3, 30, 'gold')`,
		`UPDATE acct SET balance = balance + 1 WHERE id = 1`,
		`INSERT INTO ev VALUES (2, 7, 'us')`,
		`FLUSH`)
	if got := mustRows(t, conn, `SELECT * FROM acct`); !slices.Equal(got, []string{"1|11|basic", "2|20|basic", "3|30|gold"}) {
		t.Fatalf("acct after the ALTER: %q", got)
	}

	testutil.MustExec(t, conn, `ROLLBACK TO SAVEPOINT before_alter`, `FLUSH`)
	if got := mustRows(t, conn, columns); !slices.Equal(got, old) {
		t.Errorf("columns after ROLLBACK TO SAVEPOINT: %q, want %q", got, old)
	}
	// The table keeps the rows written since; those read under the old
	// columns: no tier, and name NULL in the rows written while it was
	// dropped (3, and 1, which the UPDATE wrote again).
	if got := mustRows(t, conn, `SELECT * FROM acct`); !slices.Equal(got, []string{"1|NULL|11", "2|bob|20", "3|NULL|30"}) {
		t.Errorf("acct after ROLLBACK TO SAVEPOINT: %q", got)
	}
	_, err := rowsErr(conn, `SELECT tier FROM acct`)
	wantCode(t, err, "42703", "SELECT tier after the rollback")
	_, err = rowsErr(conn, `SELECT region FROM ev`)
	wantCode(t, err, "42703", "SELECT region after the rollback")

	testutil.MustExec(t, conn,
		`INSERT INTO acct VALUES (4, 'dan', 40)`,
		`INSERT INTO ev VALUES (3, 9)`,
		`FLUSH`)
	if got := mustRows(t, conn, `SELECT n, s FROM acct_sum`); !slices.Equal(got, []string{"4|101"}) {
		t.Errorf("acct_sum after the rollback and an insert: %q, want 4 101", got)
	}
	if got := mustRows(t, conn, `SELECT id, amount FROM ev`); !slices.Equal(got, []string{"1|5", "2|7", "3|9"}) {
		t.Errorf("ev after the rollback: %q", got)
	}
	if got := mustRows(t, conn, `SELECT n, s FROM ev_sum`); !slices.Equal(got, []string{"3|21"}) {
		t.Errorf("ev_sum after the rollback: %q, want 3 21", got)
	}
}
