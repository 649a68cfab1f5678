package e2e

import "testing"

// TestSequencePrivileges: creating a sequence needs CREATE on the
// database, as creating a table does; its creator owns it, and only the
// owner (or a superuser) alters or drops it.
func TestSequencePrivileges(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice WITH PASSWORD 'alice pw'",
		"CREATE USER bob PASSWORD 'bob pw'",
		"CREATE SEQUENCE admin_seq")
	alice := loginAs(t, srv, "alice", "alice pw")
	bob := loginAs(t, srv, "bob", "bob pw")
	wantDenied(t, alice, "CREATE SEQUENCE alice_seq", "permission denied for database streamdb")
	exec(t, admin, "GRANT CREATE ON DATABASE streamdb TO alice")
	exec(t, alice, "CREATE SEQUENCE alice_seq", "ALTER SEQUENCE alice_seq RESTART WITH 10")
	wantRows(t, admin, "SELECT sequenceowner FROM pg_sequences WHERE sequencename = 'alice_seq'", "alice")
	wantDenied(t, alice, "ALTER SEQUENCE admin_seq RESTART", "must be owner of sequence admin_seq")
	wantDenied(t, bob, "ALTER SEQUENCE alice_seq INCREMENT BY 2", "must be owner of sequence alice_seq")
	wantDenied(t, bob, "DROP SEQUENCE alice_seq", "must be owner of sequence alice_seq")
	exec(t, alice, "DROP SEQUENCE alice_seq")
}
