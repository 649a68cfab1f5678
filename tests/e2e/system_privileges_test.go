package e2e

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestViewErrorsHideValues: a failed row's error quotes the row's values,
// which come from the view's inputs. A role that may read the view but
// not its stream sees the count and "<insufficient privilege>" for the
// message, through SQL and through the console's view page logged in as
// that role; SELECT on the stream shows it the message.
func TestViewErrorsHideValues(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice PASSWORD 'alice pw'",
		"CREATE STREAM people (name TEXT, ssn TEXT)",
		"CREATE MATERIALIZED VIEW ids AS SELECT name, ssn::int AS n FROM people",
		"GRANT SELECT ON ids TO alice",
		"INSERT INTO people VALUES ('ann', '111-11-1111'), ('bo', '42')",
		"FLUSH")
	const q = "SELECT view, failed_rows, sqlstate, error FROM streamdb_view_errors"
	wantRows(t, admin, q, `ids 1 22P02 invalid input syntax for type integer: "111-11-1111"`)
	alice := loginAs(t, srv, "alice", "alice pw")
	wantRows(t, alice, "SELECT name, n FROM ids", "bo 42")
	wantRows(t, alice, q, "ids 1 22P02 <insufficient privilege>")

	page := func(user, password string) string {
		t.Helper()
		req, err := http.NewRequest("GET", srv.HTTPURL()+"/views/ids", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(user, password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET /views/ids as %s: %d %s", user, resp.StatusCode, b)
		}
		return string(b)
	}
	if p := page("alice", "alice pw"); strings.Contains(p, "111-11-1111") || !strings.Contains(p, "insufficient privilege") {
		t.Errorf("the console's view page as alice shows the failed row's value or no redacted error:\n%s", p)
	}
	if p := page("streamdb", adminPassword); !strings.Contains(p, "111-11-1111") {
		t.Errorf("the console's view page as the superuser lacks the failed row's error:\n%s", p)
	}

	exec(t, admin, "GRANT SELECT ON people TO alice")
	wantRows(t, alice, q, `ids 1 22P02 invalid input syntax for type integer: "111-11-1111"`)
}

// TestInfoSchemaColumnsPrivileges: information_schema.columns lists, as
// in PostgreSQL 15, only the columns of relations the role owns or holds
// SELECT, INSERT or UPDATE on (DELETE alone does not count).
func TestInfoSchemaColumnsPrivileges(t *testing.T) {
	srv := startServer(t)
	pg := testutil.StartPostgres(t)
	setup := []string{
		"CREATE TABLE secret (id BIGINT PRIMARY KEY, ssn TEXT)",
		"CREATE TABLE shared (id BIGINT PRIMARY KEY, note TEXT)",
		"CREATE TABLE inbox (id BIGINT PRIMARY KEY, body TEXT)",
		"CREATE TABLE trash (id BIGINT PRIMARY KEY, junk TEXT)",
		"CREATE TABLE everyone (id BIGINT PRIMARY KEY)",
		"CREATE USER reader",
		"GRANT SELECT ON shared TO reader",
		"GRANT INSERT ON inbox TO reader",
		"GRANT DELETE ON trash TO reader",
		"GRANT SELECT ON everyone TO PUBLIC",
		"GRANT CREATE ON DATABASE streamdb TO reader",
	}
	exec(t, srv.Conn(t), setup...)
	pgSetup := slices.Clone(setup)
	pgSetup[len(pgSetup)-1] = "GRANT CREATE ON SCHEMA public TO reader"
	exec(t, pg.Conn(t), pgSetup...)
	sdbReader := connectAs(t, srv, "reader")
	pgReader, err := dialAuth(t, strings.Replace(pg.DSN(), "postgres@", "reader@", 1))
	if err != nil {
		t.Fatal(err)
	}
	own := "CREATE TABLE mine (k TEXT PRIMARY KEY, v INT)"
	exec(t, sdbReader, own)
	exec(t, pgReader, own)
	const q = `SELECT table_name, column_name, ordinal_position FROM information_schema.columns
		WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`
	got, want := textRows(t, sdbReader, q), textRows(t, pgReader, q)
	if !slices.Equal(got, want) {
		t.Errorf("information_schema.columns as reader\n streamdb: %q\npostgres: %q", got, want)
	}
	if n := len(textRows(t, srv.Conn(t), q)); n != 11 {
		t.Errorf("information_schema.columns as the superuser: %d columns, want all 11", n)
	}
}
