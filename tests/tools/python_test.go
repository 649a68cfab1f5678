// Package tools runs the clients PostgreSQL users connect with (psycopg2,
// psycopg 3, SQLAlchemy) against a real streamdb, through scripts kept
// under testdata.
package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// python returns a python3 that imports psycopg2, psycopg and sqlalchemy:
// Debian's (/usr/bin/python3, where .ci/run installs them) or the one on
// $PATH. A missing one fails with the install line, as CI installs them.
func python(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if exec.Command(p, "-c", "import psycopg2, psycopg, sqlalchemy").Run() == nil {
			return p
		}
	}
	t.Fatal("no python3 with psycopg2, psycopg and sqlalchemy: apt-get install -y python3-psycopg2 python3-psycopg python3-sqlalchemy")
	return ""
}

// runScript runs testdata/<name> with args and returns its output lines
// as a map from check name to value.
func runScript(t *testing.T, name string, args ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python(t), append([]string{filepath.Join("testdata", name)}, args...)...)
	cmd.Env = append(os.Environ(), "PGTZ=UTC", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", name, err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	return got
}

// TestPythonDrivers: psycopg2 and psycopg 3 connect, read version(),
// current_setting, now(), pg_type.typarray and current_schemas, and bind
// parameters; SQLAlchemy connects (its dialect reads the version and
// pg_type on connect), runs a bound query and lists tables through the
// inspector.
func TestPythonDrivers(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	for _, sql := range []string{
		"CREATE TABLE accounts (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, balance NUMERIC(10,2))",
		"INSERT INTO accounts VALUES (1, 'ann', 12.50)",
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	got := runScript(t, "drivers.py", srv.DSN())
	want := map[string]string{
		"sqlalchemy select":          "ann",
		"sqlalchemy get_table_names": "['accounts']",
		"sqlalchemy has_table":       "True",
	}
	for _, d := range []string{"psycopg2", "psycopg3"} {
		want[d+" server_version"] = "True"
		want[d+" current_setting"] = "True"
		want[d+" version"] = "['PostgreSQL', '15.0']"
		want[d+" now"] = "datetime"
		want[d+" typarray"] = "1009"
		want[d+" params"] = "(1, 'ann')"
		want[d+" schemas"] = "{pg_catalog,public}"
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if t.Failed() {
		t.Logf("all checks:\n%v", got)
	}
}

// TestSQLAlchemyInspector: SQLAlchemy's inspector lists tables and views
// and reads a table's columns with their nullability (array columns as
// ARRAY types), its primary key, and
// a view's columns and definition; psycopg2's copy_expert and psycopg 3's
// copy write and read rows through COPY.
func TestSQLAlchemyInspector(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	for _, sql := range []string{
		"CREATE TABLE accounts (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, balance NUMERIC(10,2))",
		"INSERT INTO accounts VALUES (1, 'ann', 12.50)",
		"CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(balance) AS total FROM accounts",
		"CREATE TABLE tagged (id int PRIMARY KEY, tags text[], scores float8[], days date[])",
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	got := runScript(t, "inspector.py", srv.DSN())
	want := map[string]string{
		"get_table_names":           "['accounts', 'tagged']",
		"get_columns arrays":        "[('id', 'INTEGER', ''), ('tags', 'ARRAY', 'TEXT'), ('scores', 'ARRAY', 'DOUBLE_PRECISION'), ('days', 'ARRAY', 'DATE')]",
		"get_view_names":            "['totals']",
		"get_columns":               "[('id', 'BIGINT', False), ('name', 'VARCHAR(20)', False), ('balance', 'NUMERIC(10, 2)', True)]",
		"get_pk_constraint":         "['id']",
		"get_pk_name":               "accounts_pkey",
		"get_view_columns":          "[('n', 'BIGINT'), ('total', 'NUMERIC')]",
		"get_view_definition":       "SELECT count(*) AS n, sum(balance) AS total FROM accounts;",
		"get_indexes":               "[]",
		"get_foreign_keys":          "[]",
		"get_unique_constraints":    "[]",
		"get_schema_names":          "['information_schema', 'public']",
		"reflect":                   "['accounts', 'tagged']",
		"reflected pk":              "['id']",
		"psycopg2 copy_expert from": "2",
		"psycopg2 copy_expert to":   "['id,name', '7,gus', '8,hal']",
		"psycopg3 copy write_row":   "[('ivy',), ('jo\\tn',)]",
		"psycopg3 copy rows":        "[('9', 'ivy'), ('10', 'jo\\tn')]",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if t.Failed() {
		t.Logf("all checks:\n%v", got)
	}
}

// TestPythonCursors: psycopg2's named (server-side) cursors read a query's
// rows in parts inside a transaction block, skip rows (MOVE) and, WITH
// HOLD, after COMMIT; a pooler's reset (DEALLOCATE ALL, DISCARD ALL)
// answers with PostgreSQL's command tags.
func TestPythonCursors(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	for _, sql := range []string{
		"CREATE TABLE items (k int PRIMARY KEY, v text)",
		"INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e'), (6, 'f'), (7, 'g')",
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	got := runScript(t, "cursors.py", srv.DSN())
	want := map[string]string{
		"named cursor": "[(1, 'a'), (2, 'b'), (4, 'd'), (5, 'e')]",
		"iterate":      "[1, 2, 3, 4, 5, 6, 7]",
		"withhold":     "7",
		"reset":        "['DEALLOCATE ALL', 'DISCARD ALL']",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if t.Failed() {
		t.Logf("all checks:\n%v", got)
	}
}

// TestPythonTypesLikePostgres: psycopg2 and psycopg 3 (text and binary
// results) read every type, arrays included, into the same Python values
// from streamdb as from PostgreSQL 15, bind lists as arrays (a cast,
// = ANY, @>) and other values as parameters (uuid.UUID too, as a key),
// and commit and roll back.
func TestPythonTypesLikePostgres(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	const schema = "CREATE TABLE typed (id int PRIMARY KEY, tags text[], ns int8[]); CREATE TABLE keyed (id uuid PRIMARY KEY, n int)"
	const rows = "INSERT INTO typed VALUES (1, '{a,b}', '{1,2}'), (2, '{c}', NULL), (3, NULL, '{}')"
	if _, err := srv.Conn(t).Exec(context.Background(), schema+"; "+rows); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Conn(t).Exec(context.Background(), schema+"; "+rows); err != nil {
		t.Fatal(err)
	}
	got, want := runScript(t, "typed_values.py", srv.DSN()), runScript(t, "typed_values.py", pg.DSN())
	if len(want) < 80 {
		t.Fatalf("PostgreSQL gave %d checks: %v", len(want), want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %s\n want %s", k, got[k], w)
		}
	}
}

// TestSQLAlchemySerialKeys: SQLAlchemy's create_all makes a table whose
// Integer primary key is SERIAL and one with an identity key, and the ORM
// inserts rows and reads their generated keys back (RETURNING); the
// bigserial table Django's migrate creates first takes rows the way
// Django inserts them.
func TestSQLAlchemySerialKeys(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	got := runScript(t, "orm_serial.py", srv.DSN())
	want := map[string]string{
		"create_all":             "['orm_items', 'orm_users']",
		"orm ids":                "[1, 2, 3]",
		"orm flush id":           "4",
		"orm query":              "[(1, 'ann'), (2, 'bob'), (3, 'cy'), (4, 'dee')]",
		"identity ids":           "[1, 2]",
		"pg_get_serial_sequence": "public.orm_users_id_seq",
		"django_migrations ids":  "[1, 2]",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if t.Failed() {
		t.Logf("all checks:\n%v", got)
	}
}

// runLikePostgres runs testdata/<project>/run.py (which needs the Python
// module module) once against a fresh streamdb and once against
// PostgreSQL 15, reaching each through the PG* environment variables, and
// fails the test if the two print different output.
func runLikePostgres(t *testing.T, module, project string, timeout time.Duration) {
	t.Helper()
	py := python(t)
	if exec.Command(py, "-c", "import "+module).Run() != nil {
		t.Fatalf("no %s for %s: apt-get install -y python3-%s", module, py, module)
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	run := func(port int, user, db string) string {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", project, "run.py"))
		cmd.Env = append(os.Environ(), "PGTZ=UTC", "PYTHONDONTWRITEBYTECODE=1",
			"PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(port), "PGUSER="+user, "PGDATABASE="+db)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s on port %d: %v\n%s", project, port, err, out)
		}
		return string(out)
	}
	got, want := run(srv.Port, "streamdb", "streamdb"), run(pg.Port, "postgres", "postgres")
	if got != want {
		t.Errorf("the %s run differs\nstreamdb:\n%s\npostgres:\n%s", project, got, want)
	}
	t.Logf("%s:\n%s", project, got)
}
