package e2e

import (
	"testing"
)

// TestSinkPrivileges: CREATE SINK needs CREATE on the database and SELECT
// on the view; DROP SINK is for the sink's owner (and superusers).
func TestSinkPrivileges(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice PASSWORD 'alice pw'",
		"CREATE USER bob PASSWORD 'bob pw'",
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t")
	alice := loginAs(t, srv, "alice", "alice pw")
	bob := loginAs(t, srv, "bob", "bob pw")

	wantDenied(t, alice, "CREATE SINK a FROM mv INTO 'priv.a'", "permission denied for database streamdb")
	exec(t, admin, "GRANT CREATE ON DATABASE streamdb TO alice, bob")
	wantDenied(t, alice, "CREATE SINK a FROM mv INTO 'priv.a'", "permission denied for materialized view mv")
	exec(t, admin, "GRANT SELECT ON mv TO alice")
	exec(t, alice, "CREATE SINK a FROM mv INTO 'priv.a'")
	wantDenied(t, bob, "DROP SINK a", "must be owner of sink a")
	exec(t, alice, "DROP SINK a")
	exec(t, admin, "CREATE SINK b FROM mv INTO 'priv.b'", "DROP SINK b")
}
