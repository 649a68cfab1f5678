package e2e

import (
	"testing"
)

// TestAsOfPrivilegesByIdentity: AS OF reads the objects a savepoint
// holds, which may be other objects than today's of the same names. A
// role that re-creates a dropped table (or view) under its old name owns
// the new one, not the old one's rows: reading the savepoint is checked
// against the object it holds, whose owner and grants are kept by
// identity after the DROP.
func TestAsOfPrivilegesByIdentity(t *testing.T) {
	srv := startServer(t)
	admin := srv.Conn(t)
	exec(t, admin,
		"CREATE USER eve",
		"CREATE USER auditor",
		"GRANT CREATE ON DATABASE streamdb TO eve",
		"CREATE TABLE hist (id BIGINT PRIMARY KEY, secret TEXT)",
		"INSERT INTO hist VALUES (1, 'old secret')",
		"CREATE MATERIALIZED VIEW hv AS SELECT id, secret FROM hist",
		"GRANT SELECT ON hist TO auditor",
		"FLUSH",
		"SAVEPOINT sp2",
		"DROP MATERIALIZED VIEW hv",
		"DROP TABLE hist")
	eve := connectAs(t, srv, "eve")
	exec(t, eve,
		"CREATE TABLE hist (id BIGINT PRIMARY KEY, secret TEXT)",
		"INSERT INTO hist VALUES (2, 'eve''s own')",
		"CREATE MATERIALIZED VIEW hv AS SELECT id, secret FROM hist")
	wantRows(t, eve, "SELECT id, secret FROM hist", "2 eve's own")
	wantDenied(t, eve, "SELECT * FROM hist AS OF SAVEPOINT sp2", "permission denied for table hist")
	wantDenied(t, eve, "SELECT * FROM hv AS OF SAVEPOINT sp2", "permission denied for materialized view hv")
	wantDenied(t, eve, "SELECT count(*) FROM (SELECT id FROM hist) AS q AS OF SAVEPOINT sp2", "permission denied for table hist")

	// The old table's grant still holds for the old table, and only for it.
	auditor := connectAs(t, srv, "auditor")
	wantRows(t, auditor, "SELECT id, secret FROM hist AS OF SAVEPOINT sp2", "1 old secret")
	wantDenied(t, auditor, "SELECT * FROM hist", "permission denied for table hist")
	wantDenied(t, auditor, "SELECT * FROM hv AS OF SAVEPOINT sp2", "permission denied for materialized view hv")
	wantRows(t, admin, "SELECT id, secret FROM hv AS OF SAVEPOINT sp2", "1 old secret")
}
