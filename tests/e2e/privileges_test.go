package e2e

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/pgwire"
	"streamdb/tests/testutil"
)

// userDSN is a URL for user with password on srv.
func userDSN(srv *testutil.Server, user, password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: srv.Addr, Path: "/streamdb", RawQuery: "sslmode=disable"}
	return u.String()
}

// loginAs connects as user with password and fails the test if it cannot.
func loginAs(t *testing.T, srv *testutil.Server, user, password string) *pgx.Conn {
	t.Helper()
	conn, err := dialAuth(t, userDSN(srv, user, password))
	if err != nil {
		t.Fatalf("log in as %s: %v", user, err)
	}
	return conn
}

// wantDenied runs sql and checks that it fails with 42501 and message.
func wantDenied(t *testing.T, conn *pgx.Conn, sql, message string) {
	t.Helper()
	pe := wantExecCode(t, conn, sql, "42501")
	if pe != nil && pe.Message != message {
		t.Errorf("%s: message %q, want %q", sql, pe.Message, message)
	}
}

// TestPrivileges: users created with CREATE USER log in with their
// passwords; what they may do is what they own or were granted; the
// whole-system commands are for superusers; users and grants survive
// ROLLBACK TO SAVEPOINT and a restart.
func TestPrivileges(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice WITH PASSWORD 'alice pw'",
		"CREATE USER bob PASSWORD 'bob pw'",
		"CREATE ROLE quiet PASSWORD 'quiet pw'", // NOLOGIN by default
		"CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)",
		"INSERT INTO t VALUES (1, 'one'), (2, 'two')",
		"CREATE STREAM s (x BIGINT)",
		"CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n FROM t",
	)
	wantExecCode(t, admin, "CREATE USER alice", "42710")
	wantExecCode(t, admin, "CREATE USER pg_x", "42602")

	// Logging in.
	_, err := dialAuth(t, userDSN(srv, "alice", "wrong"))
	wantCode(t, err, "28P01")
	_, err = dialAuth(t, userDSN(srv, "quiet", "quiet pw"))
	wantCode(t, err, "28P01")
	alice := loginAs(t, srv, "alice", "alice pw")
	bob := loginAs(t, srv, "bob", "bob pw")
	wantRows(t, alice, "SELECT current_user, session_user", "alice alice")

	// Nothing granted yet.
	wantDenied(t, alice, "SELECT * FROM t", "permission denied for table t")
	wantDenied(t, alice, "SELECT n FROM mv", "permission denied for materialized view mv")
	wantDenied(t, alice, "SELECT * FROM (SELECT id FROM t) x", "permission denied for table t")
	wantDenied(t, alice, "INSERT INTO t VALUES (3, 'three')", "permission denied for table t")
	wantDenied(t, alice, "UPDATE t SET v = 'x' WHERE id = 1", "permission denied for table t")
	wantDenied(t, alice, "DELETE FROM t WHERE id = 1", "permission denied for table t")
	wantDenied(t, alice, "INSERT INTO s VALUES (1)", "permission denied for stream s")
	wantDenied(t, alice, "CREATE TABLE mine (id BIGINT)", "permission denied for database streamdb")
	wantDenied(t, alice, "CREATE MATERIALIZED VIEW v2 AS SELECT * FROM t", "permission denied for database streamdb")
	wantDenied(t, alice, "DROP TABLE t", "must be owner of table t")
	wantDenied(t, alice, "DROP MATERIALIZED VIEW mv", "must be owner of materialized view mv")
	wantDenied(t, alice, "GRANT SELECT ON t TO alice", "permission denied for table t")
	wantDenied(t, alice, "GRANT CREATE ON DATABASE streamdb TO alice", "permission denied for database streamdb")

	// Whole-system commands and other users are for superusers.
	wantDenied(t, alice, "CHECKPOINT", "must be superuser to do CHECKPOINT")
	wantDenied(t, alice, "SAVEPOINT sp", "must be superuser to create a savepoint of the whole system")
	wantDenied(t, alice, "RELEASE SAVEPOINT sp", "must be superuser to release a savepoint of the whole system")
	wantDenied(t, alice, "ROLLBACK TO SAVEPOINT sp", "must be superuser to roll the whole system back")
	wantDenied(t, alice, "ROLLBACK TO CHECKPOINT 1", "must be superuser to roll the whole system back")
	wantDenied(t, alice, "ALTER SYSTEM PAUSE", "must be superuser to execute ALTER SYSTEM command")
	wantDenied(t, alice, "ALTER SYSTEM SET execution.barrier.interval = '30ms'", "must be superuser to execute ALTER SYSTEM command")
	wantDenied(t, alice, "SET execution.barrier.interval = '30ms'", `permission denied to set parameter "execution.barrier.interval"`)
	wantDenied(t, alice, "ALTER STREAM s SET POSITION = 'latest'", "must be superuser to move the position of stream s")
	wantDenied(t, alice, "CREATE USER carol", "permission denied to create role")
	wantDenied(t, alice, "ALTER USER bob PASSWORD 'x'", "permission denied to alter role")
	wantDenied(t, alice, "ALTER USER alice SUPERUSER", "permission denied to alter role")
	wantDenied(t, alice, "DROP USER bob", "permission denied to drop role")
	// What every session may do.
	exec(t, alice, "SET statement_timeout = '5s'", "BEGIN", "SAVEPOINT a", "ROLLBACK TO SAVEPOINT a", "RELEASE SAVEPOINT a", "COMMIT", "FLUSH", "SHOW TABLES")

	// Grants take effect at once, also for statements prepared before.
	exec(t, admin, "GRANT SELECT, INSERT, UPDATE ON TABLE t, mv TO alice")
	var n int64
	if err := alice.QueryRow(testutil.Context(t, 30*time.Second), "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("granted SELECT: %d, %v", n, err)
	}
	exec(t, alice, "INSERT INTO t VALUES (3, 'three')", "UPDATE t SET v = 'uno' WHERE id = 1")
	wantRows(t, alice, "SELECT n FROM mv", "3")
	wantDenied(t, alice, "DELETE FROM t WHERE id = 3", "permission denied for table t")
	wantDenied(t, bob, "SELECT * FROM t", "permission denied for table t")
	exec(t, admin, "REVOKE SELECT ON t FROM alice")
	err = alice.QueryRow(testutil.Context(t, 30*time.Second), "SELECT count(*) FROM t").Scan(&n)
	wantCode(t, err, "42501")
	// UPDATE with a WHERE reads the table: it needs SELECT too.
	wantDenied(t, alice, "UPDATE t SET v = 'x' WHERE id = 1", "permission denied for table t")
	exec(t, alice, "INSERT INTO t VALUES (4, 'four')")
	exec(t, admin, "GRANT SELECT ON t TO PUBLIC")
	wantRows(t, bob, "SELECT v FROM t WHERE id = 4", "four")
	exec(t, admin, "REVOKE ALL ON t FROM PUBLIC")

	// Owners.
	exec(t, admin, "GRANT CREATE ON DATABASE streamdb TO alice")
	exec(t, alice,
		"CREATE TABLE mine (id BIGINT PRIMARY KEY, note TEXT)",
		"INSERT INTO mine VALUES (1, 'a')",
		"DELETE FROM mine WHERE id = 1",
		"INSERT INTO mine VALUES (2, 'b')")
	wantRows(t, alice, "SELECT note FROM mine", "b")
	wantDenied(t, bob, "SELECT * FROM mine", "permission denied for table mine")
	wantDenied(t, bob, "DROP TABLE mine", "must be owner of table mine")
	exec(t, alice, "GRANT SELECT ON mine TO bob")
	wantRows(t, bob, "SELECT note FROM mine", "b")
	wantDenied(t, bob, "GRANT SELECT ON mine TO bob", "permission denied for table mine")
	// A view over a table alice may not read is refused; over her own it works.
	wantDenied(t, alice, "CREATE MATERIALIZED VIEW spy AS SELECT count(*) FROM s", "permission denied for stream s")
	exec(t, alice, "CREATE MATERIALIZED VIEW mine_count AS SELECT count(*) AS c FROM mine")
	wantRows(t, alice, "SELECT c FROM mine_count", "1")
	pe := wantExecCode(t, admin, "DROP USER alice", "2BP01")
	if pe != nil && !strings.Contains(pe.Detail, "owner of table mine") {
		t.Errorf("DROP USER alice detail: %q", pe.Detail)
	}

	// Catalog rows.
	wantRows(t, admin, "SELECT rolname, rolsuper, rolcanlogin FROM pg_roles ORDER BY rolname",
		"alice f t", "bob f t", "pg_database_owner f f", "quiet f f", "streamdb t t")
	wantRows(t, admin, "SELECT usename FROM pg_user ORDER BY usename", "alice", "bob", "streamdb")
	wantRows(t, admin, "SHOW password_encryption", "scram-sha-256")

	// A user changes her own password the way psql's \password does: with
	// a verifier computed on the client.
	v, err := pgwire.NewSCRAMVerifier("alice new pw")
	if err != nil {
		t.Fatal(err)
	}
	exec(t, alice, fmt.Sprintf("ALTER USER alice PASSWORD '%s'", v.String()))
	_, err = dialAuth(t, userDSN(srv, "alice", "alice pw"))
	wantCode(t, err, "28P01")
	loginAs(t, srv, "alice", "alice new pw")
	wantExecCode(t, admin, "ALTER USER streamdb PASSWORD 'x'", "55P02")
	wantExecCode(t, admin, "DROP USER streamdb", "55006")

	// Users and grants are not part of the state a rollback restores.
	exec(t, admin, "SAVEPOINT before_users")
	exec(t, admin,
		"CREATE USER dave PASSWORD 'dave pw'",
		"GRANT SELECT ON t TO bob",
		"ALTER USER quiet LOGIN",
		"REVOKE SELECT ON mine FROM bob")
	exec(t, admin, "ROLLBACK TO SAVEPOINT before_users")
	dave := loginAs(t, srv, "dave", "dave pw")
	wantDenied(t, dave, "SELECT * FROM t", "permission denied for table t")
	loginAs(t, srv, "quiet", "quiet pw")
	wantRows(t, bob, "SELECT count(*) FROM t", "4")
	wantDenied(t, bob, "SELECT * FROM mine", "permission denied for table mine")

	// And they survive a restart.
	srv.Restart(t)
	bob = loginAs(t, srv, "bob", "bob pw")
	wantRows(t, bob, "SELECT count(*) FROM t", "4")
	alice = loginAs(t, srv, "alice", "alice new pw")
	wantRows(t, alice, "SELECT note FROM mine", "b")
	wantDenied(t, alice, "DELETE FROM t WHERE id = 3", "permission denied for table t")
	exec(t, alice, "DROP MATERIALIZED VIEW mine_count", "DROP TABLE mine")
	admin = loginAs(t, srv, "streamdb", adminPassword)
	exec(t, admin, "DROP USER dave, quiet", "REVOKE CREATE ON DATABASE streamdb FROM alice")
	wantDenied(t, alice, "CREATE TABLE again (id BIGINT)", "permission denied for database streamdb")
	_, err = dialAuth(t, userDSN(srv, "dave", "dave pw"))
	wantCode(t, err, "28P01")
	// A role that holds a privilege is not dropped (2BP01, as in
	// PostgreSQL); once revoked it is, and its open session has no
	// privileges left.
	pe = wantExecCode(t, admin, "DROP USER bob", "2BP01")
	if pe != nil && pe.Detail != "privileges for table t" {
		t.Errorf("DROP USER bob detail: %q", pe.Detail)
	}
	exec(t, admin, "REVOKE SELECT ON t FROM bob", "DROP USER bob")
	wantDenied(t, bob, "SELECT * FROM t", "permission denied for table t")
}

// TestPsqlPasswordAndDu: psql's \password changes a user's password (psql
// computes the SCRAM verifier and sends ALTER USER ... PASSWORD), and \du
// lists the users.
func TestPsqlPasswordAndDu(t *testing.T) {
	if _, err := osexec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	srv, admin := startWithAdmin(t)
	exec(t, admin, "CREATE USER erin PASSWORD 'erin pw'", "CREATE ROLE readers")
	conninfo := func(user string) string {
		return fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=streamdb sslmode=disable", srv.Port, user)
	}
	out, err := runPsql(t, []string{"PGPASSWORD=" + adminPassword}, conninfo("streamdb"), "-c", `\du`)
	if err != nil {
		t.Fatalf(`\du: %v\n%s`, err, out)
	}
	for _, want := range []string{"erin||{}", "readers|Cannot login|{}", "streamdb|Superuser, Create role, Create DB, Bypass RLS|{}"} {
		if !strings.Contains(out, want) {
			t.Errorf(`\du: no line %q in:\n%s`, want, out)
		}
	}

	// \password reads the new password from the terminal: run psql under
	// script(1), which gives it one fed from our stdin.
	if _, err := osexec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "script", "-qec", fmt.Sprintf(`psql -X -w "%s" -c '\password'`, conninfo("erin")), "/dev/null")
	cmd.Env = append(os.Environ(), "PGPASSWORD=erin pw")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var term lockedBuffer
	cmd.Stdout, cmd.Stderr = &term, &term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Type each line once its prompt shows: psql reads the terminal
	// afresh for each prompt, and it turns echo off (flushing pending
	// input) before it writes the prompt, so a line typed after the
	// prompt shows is the one it reads.
	for _, prompt := range []string{"Enter new password", "Enter it again"} {
		poll(t, 20*time.Second, func() error {
			if !strings.Contains(term.String(), prompt) {
				return fmt.Errorf("no prompt %q in %q", prompt, term.String())
			}
			return nil
		})
		io.WriteString(stdin, "erin new\n")
	}
	waitErr := cmd.Wait()
	if waitErr != nil {
		t.Fatalf(`\password: %v\n%s`, waitErr, term.String())
	}
	_, err = dialAuth(t, userDSN(srv, "erin", "erin pw"))
	wantCode(t, err, "28P01")
	loginAs(t, srv, "erin", "erin new")
}

// TestTrustedLoopbackUsers: without a password, loopback connections are
// trusted; a name that is no created user is a superuser (as every
// connection was before users existed), a created user has its own
// privileges, and a role without LOGIN cannot connect.
func TestTrustedLoopbackUsers(t *testing.T) {
	srv := startServer(t)
	anyone := connectAs(t, srv, "u")
	exec(t, anyone,
		"CREATE TABLE t (id BIGINT PRIMARY KEY)",
		"CHECKPOINT",
		"CREATE USER limited",
		"CREATE ROLE nologin")
	limited := connectAs(t, srv, "limited")
	wantRows(t, limited, "SELECT current_user", "limited")
	wantDenied(t, limited, "SELECT * FROM t", "permission denied for table t")
	wantDenied(t, limited, "CHECKPOINT", "must be superuser to do CHECKPOINT")
	_, err := dialAuth(t, fmt.Sprintf("postgres://nologin@%s/streamdb?sslmode=disable", srv.Addr))
	if pe := wantCode(t, err, "28000"); pe != nil && pe.Message != `role "nologin" is not permitted to log in` {
		t.Errorf("message: %s", pe.Message)
	}
	// What a statement reads is found inside it: subqueries, EXPLAIN,
	// AS OF and window sources; CTEs and system tables need nothing.
	exec(t, anyone,
		"CREATE STREAM clicks (page TEXT, ts TIMESTAMP)",
		"SAVEPOINT sp",
		"GRANT CREATE ON DATABASE streamdb TO limited")
	wantRows(t, limited, "WITH t AS (SELECT 1 AS a) SELECT a FROM t", "1")
	wantRows(t, limited, "SELECT count(*) FROM pg_catalog.pg_roles WHERE rolname = current_user", "1")
	wantDenied(t, limited, "SELECT 1 AS id UNION ALL SELECT id FROM t", "permission denied for table t")
	wantDenied(t, limited, "EXPLAIN SELECT * FROM t", "permission denied for table t")
	wantDenied(t, limited, "SELECT * FROM t AS OF SAVEPOINT sp", "permission denied for table t")
	wantDenied(t, limited, "CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) AS n FROM TUMBLE(clicks, ts, INTERVAL '1' MINUTE) GROUP BY window_start",
		"permission denied for stream clicks")
	exec(t, anyone, "GRANT SELECT ON clicks TO limited")
	exec(t, limited, "CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) AS n FROM TUMBLE(clicks, ts, INTERVAL '1' MINUTE) GROUP BY window_start")
	// CREATE ... IF NOT EXISTS of someone else's object takes nothing.
	exec(t, limited, "CREATE TABLE IF NOT EXISTS t (id BIGINT PRIMARY KEY)")
	wantDenied(t, limited, "DROP TABLE t", "must be owner of table t")
	exec(t, anyone, "ALTER USER limited SUPERUSER")
	exec(t, limited, "SELECT * FROM t", "CHECKPOINT")
}

// connectAs connects as user without a password.
func connectAs(t *testing.T, srv *testutil.Server, user string) *pgx.Conn {
	t.Helper()
	conn, err := dialAuth(t, fmt.Sprintf("postgres://%s@%s/streamdb?sslmode=disable", user, srv.Addr))
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	return conn
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
