package e2e

import (
	"strings"
	"testing"
)

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

// TestSequenceUsePrivileges: using a sequence takes PostgreSQL's
// privileges on it (nextval USAGE or UPDATE, currval USAGE or SELECT,
// setval UPDATE); a serial column's sequence is the table owner's, so an
// INSERT needs USAGE on it besides INSERT on the table; psql's \dp shows
// the grants.
func TestSequenceUsePrivileges(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice WITH PASSWORD 'alice pw'",
		"CREATE SEQUENCE q",
		"CREATE TABLE orders (id serial, item text)",
		"GRANT INSERT ON orders TO alice")
	alice := loginAs(t, srv, "alice", "alice pw")
	wantDenied(t, alice, "SELECT nextval('q')", "permission denied for sequence q")
	wantDenied(t, alice, "SELECT setval('q', 5)", "permission denied for sequence q")
	wantDenied(t, alice, "INSERT INTO orders (item) VALUES ('tea')", "permission denied for sequence orders_id_seq")

	exec(t, admin, "GRANT USAGE ON SEQUENCE q, orders_id_seq TO alice")
	wantRows(t, alice, "SELECT nextval('q'), currval('q')", "1 1")
	wantDenied(t, alice, "SELECT setval('q', 5)", "permission denied for sequence q")
	exec(t, alice, "INSERT INTO orders (item) VALUES ('tea')")
	wantRows(t, admin, "SELECT id, item FROM orders", "1 tea")

	exec(t, admin, "GRANT UPDATE ON SEQUENCE q TO alice", "REVOKE USAGE ON SEQUENCE q FROM alice")
	wantRows(t, alice, "SELECT setval('q', 5), nextval('q')", "5 6")
	wantDenied(t, alice, "SELECT currval('q')", "permission denied for sequence q")

	out, err := runPsql(t, []string{"PGPASSWORD=" + adminPassword}, userDSN(srv, "streamdb", adminPassword), "-c", `\dp q`)
	if err != nil || !strings.Contains(out, "streamdb=rwU/streamdb\nalice=w/streamdb") {
		t.Errorf(`\dp q: %v\n%s`, err, out)
	}
	out, err = runPsql(t, []string{"PGPASSWORD=" + adminPassword}, userDSN(srv, "streamdb", adminPassword), "-c", `\z orders`)
	if err != nil || !strings.Contains(out, "streamdb=arwdDxt/streamdb\nalice=a/streamdb") {
		t.Errorf(`\z orders: %v\n%s`, err, out)
	}
}
