package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestPlainViewsDurable: a view, a materialized view over it and their
// comments survive a restart and follow ROLLBACK TO SAVEPOINT like other
// catalog objects; the materialized view keeps following its table
// through the view.
func TestPlainViewsDurable(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE pvd (k int PRIMARY KEY, g int)",
		"INSERT INTO pvd VALUES (1, 1), (2, 1), (3, 2)",
		"CREATE VIEW pvd_v (key, grp) AS SELECT k, g FROM pvd WHERE g = 1",
		"CREATE MATERIALIZED VIEW pvd_m AS SELECT count(*) AS n FROM pvd_v",
		"COMMENT ON VIEW pvd_v IS 'group one'",
		"COMMENT ON COLUMN pvd.g IS 'the group'",
	)
	flush(t, conn)
	check := func(when string) {
		t.Helper()
		wantRows(t, conn, "SELECT key, grp FROM pvd_v ORDER BY key", "1 1", "2 1")
		wantRows(t, conn, "SELECT relkind FROM pg_class WHERE relname = 'pvd_v'", "v")
		wantRows(t, conn, "SELECT obj_description('pvd_v'::regclass, 'pg_class'), col_description('pvd'::regclass, 2)",
			"group one the group")
		wantRows(t, conn, "SELECT n FROM pvd_m", "2")
		if t.Failed() {
			t.Fatalf("%s: see above", when)
		}
	}
	check("before the restart")

	srv.Restart(t)
	conn = srv.Conn(t)
	check("after a restart")
	wantExecCode(t, conn, "DROP VIEW pvd_v", "2BP01")

	// ROLLBACK TO SAVEPOINT brings back the view and the comment as they
	// were at the savepoint.
	exec(t, conn,
		"SAVEPOINT pvd_sp",
		"COMMENT ON VIEW pvd_v IS 'changed'",
		"DROP VIEW pvd_v CASCADE",
		"CREATE VIEW pvd_w AS SELECT 1 AS one",
	)
	wantExecCode(t, conn, "SELECT * FROM pvd_v", "42P01")
	exec(t, conn, "ROLLBACK TO SAVEPOINT pvd_sp")
	check("after ROLLBACK TO SAVEPOINT")
	wantExecCode(t, conn, "SELECT * FROM pvd_w", "42P01")

	// The materialized view over the view still follows the table.
	exec(t, conn, "INSERT INTO pvd VALUES (4, 1)")
	flush(t, conn)
	wantRows(t, conn, "SELECT n FROM pvd_m", "3")
}

// TestPlainViewsCascadeNotice: DROP ... CASCADE tells what it dropped
// besides the named object, in PostgreSQL's words.
func TestPlainViewsCascadeNotice(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	var mu sync.Mutex
	var notices []string
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		notices = append(notices, n.Message+" | "+n.Detail)
		mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(testutil.Context(t, 30*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	exec(t, conn,
		"CREATE TABLE pvn (k int PRIMARY KEY)",
		"CREATE VIEW pvn_a AS SELECT k FROM pvn",
		"CREATE VIEW pvn_b AS SELECT k FROM pvn_a",
		"CREATE MATERIALIZED VIEW pvn_m AS SELECT count(*) AS n FROM pvn_b",
		"DROP VIEW pvn_b CASCADE",
		"DROP TABLE pvn CASCADE",
	)
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"drop cascades to materialized view pvn_m | ",
		"drop cascades to view pvn_a | ",
	}
	if !slices.Equal(notices, want) {
		t.Errorf("notices:\n got: %q\nwant: %q", notices, want)
	}
}

// TestPlainViewPrivileges: reading a view needs SELECT on the view only;
// the relations under it are read with its owner's privileges, as in
// PostgreSQL.
func TestPlainViewPrivileges(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice PASSWORD 'alice pw'",
		"CREATE USER bob PASSWORD 'bob pw'",
		"GRANT CREATE ON DATABASE streamdb TO bob",
		"CREATE TABLE secret (id int PRIMARY KEY, v text)",
		"INSERT INTO secret VALUES (1, 'one'), (2, 'two')",
		"GRANT SELECT ON secret TO bob",
	)
	bob := loginAs(t, srv, "bob", "bob pw")
	alice := loginAs(t, srv, "alice", "alice pw")
	// alice may create a view over what she cannot read, as in
	// PostgreSQL, but reading it needs her to be allowed to read that
	// (she owns it), whoever reads it.
	exec(t, admin, "GRANT CREATE ON DATABASE streamdb TO alice")
	exec(t, alice, "CREATE VIEW peek AS SELECT * FROM secret")
	wantDenied(t, alice, "SELECT * FROM peek", "permission denied for table secret")
	exec(t, alice, "GRANT SELECT ON peek TO bob")
	wantDenied(t, bob, "SELECT * FROM peek", "permission denied for table secret")
	exec(t, admin, "GRANT SELECT ON secret TO alice")
	wantRows(t, alice, "SELECT id FROM peek ORDER BY id", "1", "2")
	wantRows(t, bob, "SELECT count(*) FROM peek", "2")
	exec(t, admin, "REVOKE SELECT ON secret FROM alice")
	wantDenied(t, bob, "SELECT * FROM peek", "permission denied for table secret")
	exec(t, alice, "DROP VIEW peek")

	exec(t, bob, "CREATE VIEW ids AS SELECT id FROM secret")
	wantDenied(t, alice, "SELECT * FROM ids", "permission denied for view ids")
	exec(t, bob, "GRANT SELECT ON ids TO alice")
	wantRows(t, alice, "SELECT id FROM ids ORDER BY id", "1", "2")
	wantDenied(t, alice, "SELECT * FROM secret", "permission denied for table secret")

	// The owner's privileges count, checked when the view is read.
	exec(t, admin, "REVOKE SELECT ON secret FROM bob")
	wantDenied(t, alice, "SELECT * FROM ids", "permission denied for table secret")
	exec(t, admin, "GRANT SELECT ON secret TO bob")
	wantRows(t, alice, "SELECT count(*) FROM ids", "2")

	// Only the owner replaces, renames, comments on or drops a view.
	wantDenied(t, alice, "CREATE OR REPLACE VIEW ids AS SELECT id, v FROM secret", "must be owner of view ids")
	wantDenied(t, alice, "ALTER VIEW ids RENAME TO ids2", "must be owner of view ids")
	wantDenied(t, alice, "COMMENT ON VIEW ids IS 'x'", "must be owner of view ids")
	wantDenied(t, alice, "DROP VIEW ids", "must be owner of view ids")
	exec(t, bob, "ALTER VIEW ids RENAME TO ids2")
	wantRows(t, alice, "SELECT count(*) FROM ids2", "2")
	exec(t, bob, "DROP VIEW ids2")
}

// TestPlainViewReadsRenamedColumn: a plain view keeps reading a column
// renamed under it (ALTER TABLE ... RENAME COLUMN), after a restart and
// inside a materialized view created over it afterwards.
func TestPlainViewReadsRenamedColumn(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE prc (id int PRIMARY KEY, v int)",
		"INSERT INTO prc VALUES (1, 10), (2, 20)",
		"CREATE VIEW prc_big AS SELECT id, v FROM prc WHERE v > 15",
		"ALTER TABLE prc RENAME COLUMN v TO amount",
		"ALTER TABLE prc ADD COLUMN v int DEFAULT 0",
		"INSERT INTO prc VALUES (3, 30, 0)",
	)
	wantRows(t, conn, "SELECT id, v FROM prc_big ORDER BY id", "2 20", "3 30")
	srv.Restart(t)
	conn = srv.Conn(t)
	wantRows(t, conn, "SELECT id, v FROM prc_big ORDER BY id", "2 20", "3 30")
	exec(t, conn,
		"CREATE MATERIALIZED VIEW prc_sum AS SELECT sum(v) AS s FROM prc_big",
		"INSERT INTO prc VALUES (4, 40, 0)",
	)
	poll(t, 30*time.Second, func() error {
		if got := textRows(t, conn, "SELECT s FROM prc_sum"); len(got) != 1 || got[0] != "90" {
			return fmt.Errorf("prc_sum: %q, want 90", got)
		}
		return nil
	})
}
