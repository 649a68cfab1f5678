package recovery

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestPGSourceSecret connects PostgreSQL sources with passwords kept in
// secrets (CREATE SECRET): a source whose PASSWORD SECRET holds the
// password of a role the source database asks a password of, and one
// whose CONNECTION SECRET holds the whole connection string. Both mirror
// their table through a kill -9 and restart of streamdb and through a
// ROLLBACK TO SAVEPOINT; the secrets' values never show in SHOW SOURCES,
// streamdb_sources, pg_stat_activity, error messages, the console or the
// server's log; a secret a source uses is not dropped but with CASCADE;
// only its owner (or a superuser) alters or drops a secret.
func TestPGSourceSecret(t *testing.T) {
	const password, wrong = "pw-Only-In-A-Secret-7e1", "wrong-Secret-Value-93c"
	pg, keyValue := testutil.StartPostgresPasswordSource(t, password)
	src := pg.Conn(t)

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	// setter stays idle after its CREATE SECRET: pg_stat_activity shows it.
	setter := srv.Conn(t)
	testutil.MustExec(t, setter,
		fmt.Sprintf("CREATE SECRET pgpass AS '%s'", password),
		fmt.Sprintf("CREATE SECRET wrongpass AS '%s'", wrong),
		fmt.Sprintf("CREATE SECRET pgdsn AS 'postgres://repl:%s@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=10'", password, pg.Port))

	hidden := func(where, text string) {
		t.Helper()
		for _, s := range []string{password, wrong} {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a secret's value: %s", where, text)
			}
		}
	}
	err := testutil.ExecSimple(conn, time.Minute, fmt.Sprintf("CREATE SOURCE bad FROM POSTGRES (CONNECTION '%s', PASSWORD SECRET wrongpass, PUBLICATION 'shop') FOR TABLES (public.items AS bad_items)", keyValue))
	if err == nil || testutil.SQLState(err) != "08006" || !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("CREATE SOURCE with a wrong password: %v (SQLSTATE %s), want 08006 password authentication failed", err, testutil.SQLState(err))
	} else {
		hidden("the error of a wrong password", err.Error())
	}

	testutil.MustExec(t, conn,
		fmt.Sprintf("CREATE SOURCE shop FROM POSTGRES (CONNECTION '%s', PASSWORD SECRET pgpass, PUBLICATION 'shop') FOR TABLES (public.items)", keyValue),
		"CREATE SOURCE shop2 FROM POSTGRES (CONNECTION SECRET pgdsn, PUBLICATION 'shop') FOR TABLES (public.items AS items2)",
		"CREATE MATERIALIZED VIEW item_count AS SELECT count(*) AS n FROM items2")

	insertAt := 100
	same := func(when string) {
		t.Helper()
		testutil.MustExec(t, src, fmt.Sprintf("INSERT INTO items VALUES (%d, 'after %s')", insertAt, when),
			fmt.Sprintf("UPDATE items SET name = name || '+' WHERE id = %d", insertAt%20+1))
		insertAt++
		cols, want := mustQuery(t, src, "SELECT * FROM items ORDER BY id")
		for _, q := range []string{"SELECT * FROM items ORDER BY id", "SELECT * FROM items2 ORDER BY id"} {
			testutil.Poll(t, 2*time.Minute, when+": "+q+" to equal the source", func() error {
				_, got, err := queryText(conn, time.Minute, q)
				if err != nil {
					return err
				}
				if d := diffRows(cols, want, got, nil); d != "" {
					return fmt.Errorf("%d rows, source %d: %s", len(got), len(want), d)
				}
				return nil
			})
		}
	}
	same("CREATE SOURCE")

	shows := func(when string) {
		t.Helper()
		for _, q := range []string{"SHOW SOURCES", "SELECT * FROM streamdb_sources", "SELECT query FROM pg_stat_activity",
			"SELECT * FROM streamdb_dependencies", "SELECT relname FROM pg_class", "SELECT table_name FROM information_schema.tables"} {
			_, rows := mustQuery(t, conn, q)
			hidden(when+": "+q, fmt.Sprint(rows))
		}
		for _, page := range []string{"/", "/graph"} {
			resp, err := http.Get(srv.HTTPURL() + page)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			hidden(when+": console page "+page, string(body))
		}
		hidden(when+": the server's log", srv.Logs())
	}
	shows("running")
	if got := testutil.Scalar(t, conn, "SELECT connection FROM streamdb_sources WHERE name = 'shop2'"); got != "SECRET pgdsn" {
		t.Errorf("streamdb_sources shows shop2's connection as %q, want SECRET pgdsn", got)
	}
	for _, q := range []string{"SELECT * FROM pgpass", "DROP TABLE pgpass"} {
		if err := testutil.ExecSimple(conn, time.Minute, q); testutil.SQLState(err) != "42809" {
			t.Errorf("%s: %v, want 42809", q, err)
		}
	}

	if err := testutil.ExecSimple(conn, time.Minute, "DROP SECRET pgpass"); testutil.SQLState(err) != "2BP01" {
		t.Errorf("DROP SECRET of a secret a source uses: %v, want 2BP01", err)
	}

	// Only the owner or a superuser alters or drops a secret.
	testutil.MustExec(t, conn, "CREATE USER alice PASSWORD 'a'", "CREATE USER bob PASSWORD 'b'", "GRANT CREATE ON DATABASE streamdb TO alice, bob")
	as := func(user, pw string) *pgx.Conn {
		c, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://%s:%s@%s/streamdb?sslmode=disable&connect_timeout=10", user, pw, srv.Addr))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	alice, bob := as("alice", "a"), as("bob", "b")
	testutil.MustExec(t, alice, "CREATE SECRET alices AS 'a1'")
	for _, q := range []string{"ALTER SECRET alices AS 'b1'", "DROP SECRET alices", "ALTER SECRET pgpass AS 'x'", "DROP SECRET wrongpass"} {
		if err := testutil.ExecSimple(bob, time.Minute, q); testutil.SQLState(err) != "42501" {
			t.Errorf("bob: %s: %v, want 42501", q, err)
		}
	}
	testutil.MustExec(t, alice, "ALTER SECRET alices AS 'a2'", "DROP SECRET alices")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	same("kill -9 and restart of streamdb")
	shows("after the restart")

	// A secret is a catalog object: ROLLBACK TO brings back one dropped
	// since the savepoint and takes away one created since.
	testutil.MustExec(t, conn, "SAVEPOINT with_secrets", "CREATE SECRET later AS 'l'", "DROP SECRET wrongpass", "ROLLBACK TO SAVEPOINT with_secrets")
	if err := testutil.ExecSimple(conn, time.Minute, "DROP SECRET later"); testutil.SQLState(err) != "42704" {
		t.Errorf("DROP SECRET of a secret created after the savepoint rolled back to: %v, want 42704", err)
	}
	if err := testutil.ExecSimple(conn, time.Minute, "CREATE SECRET wrongpass AS 'x'"); testutil.SQLState(err) != "42710" {
		t.Errorf("CREATE SECRET of a secret dropped after the savepoint rolled back to: %v, want 42710", err)
	}
	same("ROLLBACK TO SAVEPOINT")

	testutil.MustExec(t, conn, "DROP SECRET pgdsn CASCADE")
	if n := testutil.Scalar(t, conn, "SELECT count(*) FROM streamdb_sources"); n != "1" {
		t.Errorf("%s sources after DROP SECRET pgdsn CASCADE, want 1 (shop)", n)
	}
	testutil.MustExec(t, conn, "DROP SOURCE shop CASCADE", "DROP SECRET pgpass, wrongpass")
	if n := testutil.Scalar(t, src, "SELECT count(*) FROM pg_replication_slots"); n != "0" {
		t.Errorf("%s replication slots left on the source after dropping the sources, want 0", n)
	}
}
