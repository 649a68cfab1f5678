package e2e

import (
	"strings"
	"testing"
)

// TestRollbackWarnsOfKeptDDL checks that a transaction block which ran
// DDL says, when it is rolled back, which statements stay in effect
// (streamdb applies DDL at once, unlike PostgreSQL), and that blocks
// whose DDL commits, or that ran none, warn of nothing.
func TestRollbackWarnsOfKeptDDL(t *testing.T) {
	srv := startServer(t)
	conn, take := noticeConn(t, srv.DSN())
	const warning = "did not undo the DDL run in this transaction block"

	steps := []struct {
		sql  string
		want string // the one warning expected, "" for none
	}{
		{"BEGIN", ""},
		{"CREATE TABLE kept (k int PRIMARY KEY, v int)", ""},
		{"INSERT INTO kept VALUES (1, 1)", ""},
		{"SAVEPOINT a", ""},
		{"CREATE INDEX kept_v ON kept (v)", ""},
		{"ROLLBACK TO SAVEPOINT a", "ROLLBACK TO SAVEPOINT " + warning + " | CREATE INDEX kept_v ON kept (v)"},
		{"ROLLBACK TO SAVEPOINT a", ""},
		{"ROLLBACK", "ROLLBACK " + warning + " | CREATE TABLE kept (k int PRIMARY KEY, v int)"},
		{"BEGIN", ""},
		{"INSERT INTO kept VALUES (2, 2)", ""},
		{"ROLLBACK", ""},
		{"BEGIN", ""},
		{"CREATE TABLE committed (k int PRIMARY KEY)", ""},
		{"COMMIT", ""},
	}
	for _, s := range steps {
		exec(t, conn, s.sql)
		got := strings.Join(take(), "\n")
		if got != s.want {
			t.Fatalf("%s: notices %q, want %q", s.sql, got, s.want)
		}
	}

	// An aborted block's COMMIT rolls back and warns the same way.
	exec(t, conn, "BEGIN", "CREATE SEQUENCE kept_seq")
	if err := execErr(t, conn, "SELECT 1/0"); err == nil {
		t.Fatal("1/0 did not fail")
	}
	take()
	exec(t, conn, "COMMIT")
	if got, want := strings.Join(take(), "\n"), "ROLLBACK "+warning+" | CREATE SEQUENCE kept_seq"; got != want {
		t.Fatalf("COMMIT of an aborted block: notices %q, want %q", got, want)
	}

	// What the warnings say stays did stay; the rolled-back row did not.
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM kept").Scan(&n); err != nil || n != 0 {
		t.Fatalf("kept holds %d rows (%v), want the table with none", n, err)
	}
	exec(t, conn, "SELECT nextval('kept_seq')", "DROP INDEX kept_v")
}
