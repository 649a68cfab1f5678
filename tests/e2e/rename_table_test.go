package e2e

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestRenameTable: ALTER TABLE ... RENAME TO keeps the table's rows,
// serial sequence, grants, constraints and the foreign keys that
// reference it; a crash (kill -9) and restart keep all of it, the old
// name is free for a new table, and ROLLBACK TO a savepoint taken before
// a rename brings the old name back.
func TestRenameTable(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice PASSWORD 'alice pw'",
		"CREATE TABLE p (id serial PRIMARY KEY, code text UNIQUE)",
		"CREATE TABLE c (cid int PRIMARY KEY, pid int REFERENCES p (id) ON DELETE CASCADE)",
		"GRANT SELECT, INSERT ON p TO alice",
		// As in PostgreSQL, the serial default's nextval needs USAGE.
		"GRANT USAGE ON SEQUENCE p_id_seq TO alice",
		"INSERT INTO p (code) VALUES ('a'), ('b')",
		"INSERT INTO c VALUES (10, 1), (20, 2)",
		"CREATE MATERIALIZED VIEW cv AS SELECT count(*) AS n FROM c",
	)
	oid := testutil.Scalar(t, admin, "SELECT 'p'::regclass::oid")

	// A view reading the table holds the name (2BP01); the table under
	// the foreign key does not.
	exec(t, admin, "CREATE VIEW pv AS SELECT code FROM p")
	wantExecCode(t, admin, "ALTER TABLE p RENAME TO q", "2BP01")
	exec(t, admin, "DROP VIEW pv", "ALTER TABLE p RENAME TO q")
	wantExecCode(t, admin, "SELECT * FROM p", "42P01")

	srv.Kill(t)
	srv.Restart(t)
	admin = loginAs(t, srv, "streamdb", adminPassword)
	alice := loginAs(t, srv, "alice", "alice pw")

	wantRows(t, admin, "SELECT id, code FROM q ORDER BY id", "1 a", "2 b")
	if got := testutil.Scalar(t, admin, "SELECT 'q'::regclass::oid"); got != oid {
		t.Errorf("oid of q is %s, want %s (the table's before the rename)", got, oid)
	}
	wantExecCode(t, admin, "SELECT * FROM p", "42P01")
	// The serial default and the grants moved with the table (the
	// sequence may skip values after a crash, as PostgreSQL's does).
	exec(t, alice, "INSERT INTO q (code) VALUES ('c')")
	wantRows(t, alice, "SELECT code FROM q WHERE id > 2", "c")
	wantRows(t, admin, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'c_pid_fkey'",
		"FOREIGN KEY (pid) REFERENCES q(id) ON DELETE CASCADE")
	// The foreign key still holds, and cascades.
	wantExecCode(t, admin, "INSERT INTO c VALUES (30, 9)", "23503")
	wantExecCode(t, admin, "INSERT INTO q (id, code) VALUES (7, 'a')", "23505")
	exec(t, admin, "DELETE FROM q WHERE id = 1")
	flush(t, admin)
	wantRows(t, admin, "SELECT cid FROM c ORDER BY cid", "20")
	wantRows(t, admin, "SELECT n FROM cv", "1")

	// The old name is free for a new table with its own changelog.
	exec(t, admin, "CREATE TABLE p (k int PRIMARY KEY)", "INSERT INTO p VALUES (5)")
	wantRows(t, admin, "SELECT k FROM p", "5")
	wantRows(t, admin, "SELECT count(*) FROM q", "2")

	exec(t, admin, "SAVEPOINT before_r", "ALTER TABLE q RENAME TO r", "INSERT INTO r (id, code) VALUES (8, 'h')")
	wantRows(t, admin, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'c_pid_fkey'",
		"FOREIGN KEY (pid) REFERENCES r(id) ON DELETE CASCADE")
	exec(t, admin, "ROLLBACK TO SAVEPOINT before_r")
	wantExecCode(t, admin, "SELECT * FROM r", "42P01")
	wantRows(t, admin, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'c_pid_fkey'",
		"FOREIGN KEY (pid) REFERENCES q(id) ON DELETE CASCADE")
	wantRows(t, admin, "SELECT code FROM q ORDER BY code", "b", "c", "h")
	wantRows(t, admin, "SELECT k FROM p", "5")

	srv.Restart(t)
	admin = loginAs(t, srv, "streamdb", adminPassword)
	wantRows(t, admin, "SELECT code FROM q ORDER BY code", "b", "c", "h")
	wantRows(t, admin, "SELECT k FROM p", "5")
	wantExecCode(t, admin, "INSERT INTO c VALUES (40, 1)", "23503")
}
