package e2e

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestRenameView: ALTER MATERIALIZED VIEW ... RENAME TO keeps the view's
// rows, oid, owner and grants under the new name, the view keeps
// following its input, and all of it survives a restart.
func TestRenameView(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice PASSWORD 'alice pw'",
		"CREATE USER bob PASSWORD 'bob pw'",
		"GRANT CREATE ON DATABASE streamdb TO bob",
		"CREATE TABLE t (id BIGINT PRIMARY KEY, g BIGINT)",
		"GRANT SELECT ON t TO bob",
		"INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)",
	)
	bob := loginAs(t, srv, "bob", "bob pw")
	exec(t, bob,
		"CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t GROUP BY g",
		"GRANT SELECT ON v TO alice",
	)
	flush(t, admin)
	oid := testutil.Scalar(t, admin, "SELECT oid FROM pg_class WHERE relname = 'v'")

	alice := loginAs(t, srv, "alice", "alice pw")
	wantDenied(t, alice, "ALTER MATERIALIZED VIEW v RENAME TO w", "must be owner of materialized view v")
	exec(t, bob, "ALTER MATERIALIZED VIEW v RENAME TO w")
	wantExecCode(t, admin, "SELECT * FROM v", "42P01")
	exec(t, admin, "INSERT INTO t VALUES (4, 3)")
	flush(t, admin)

	check := func(when string) {
		t.Helper()
		wantRows(t, alice, "SELECT g, n FROM w ORDER BY g", "1 2", "2 1", "3 1")
		wantRows(t, admin, "SELECT relname FROM pg_class WHERE relname IN ('v', 'w')", "w")
		if got := testutil.Scalar(t, admin, "SELECT oid FROM pg_class WHERE relname = 'w'"); got != oid {
			t.Errorf("%s: oid of w is %s, want %s (the view's before the rename)", when, got, oid)
		}
		if got := namedColumns(t, admin, "SHOW MATERIALIZED VIEWS", "name"); len(got) != 1 || got[0] != "w" {
			t.Errorf("%s: SHOW MATERIALIZED VIEWS lists %q, want [w]", when, got)
		}
		// The owner is still bob: alice cannot drop it, bob can rename it.
		wantDenied(t, alice, "DROP MATERIALIZED VIEW w", "must be owner of materialized view w")
	}
	check("after the rename")

	srv.Restart(t)
	admin = loginAs(t, srv, "streamdb", adminPassword)
	alice = loginAs(t, srv, "alice", "alice pw")
	bob = loginAs(t, srv, "bob", "bob pw")
	check("after a restart")
	exec(t, admin, "INSERT INTO t VALUES (5, 3)")
	flush(t, admin)
	wantRows(t, alice, "SELECT n FROM w WHERE g = 3", "2")
	exec(t, admin, "SAVEPOINT before_x")
	exec(t, bob, "ALTER MATERIALIZED VIEW w RENAME TO x")
	wantRows(t, alice, "SELECT n FROM x WHERE g = 3", "2")

	// ROLLBACK TO a savepoint before the rename brings the old name back,
	// with its grants.
	exec(t, admin, "ROLLBACK TO SAVEPOINT before_x")
	alice = loginAs(t, srv, "alice", "alice pw")
	wantRows(t, alice, "SELECT n FROM w WHERE g = 3", "2")
	wantExecCode(t, alice, "SELECT * FROM x", "42P01")
}
