package e2e

import (
	"io"
	"net/http"
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
	const adminPW = "admin secret"
	t.Setenv("PGPASSWORD", adminPW)
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_PASSWORD=" + adminPW}})
	admin := loginAs(t, srv, "streamdb", adminPW)
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
	if p := page("streamdb", adminPW); !strings.Contains(p, "111-11-1111") {
		t.Errorf("the console's view page as the superuser lacks the failed row's error:\n%s", p)
	}

	exec(t, admin, "GRANT SELECT ON people TO alice")
	wantRows(t, alice, q, `ids 1 22P02 invalid input syntax for type integer: "111-11-1111"`)
}
