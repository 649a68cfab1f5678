// Package psql checks that the psql client's describe commands (\d, \dt,
// \dv, \dm, \d name, \d+ name, \l, \dn) work against streamdb, and that
// \d name prints what a real PostgreSQL prints for the same table.
package psql

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// psqlBin returns the psql executable, skipping the test when there is none.
func psqlBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (apt-get install -y postgresql-client)")
	}
	return p
}

// runPsql runs one psql command (-c) and returns its standard output. It
// fails the test when psql exits non-zero or writes an error.
func runPsql(t *testing.T, bin string, port int, user, command string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
		"-p", fmt.Sprint(port), "-U", user, "-d", user, "-c", command)
	cmd.Env = append(cmd.Environ(), "PGCONNECT_TIMEOUT=10", "PGTZ=UTC", "PAGER=", "PSQL_PAGER=", "COLUMNS=200")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || strings.Contains(stderr.String(), "ERROR") {
		t.Fatalf("psql -c %q: %v\nstdout:\n%s\nstderr:\n%s", command, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func execAll(t *testing.T, conn *pgx.Conn, sqls ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// mustContain fails unless out contains every one of wants.
func mustContain(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q:\n%s", what, w, out)
		}
	}
}

// row matches a line of psql's aligned output: the cells joined by "|",
// each trimmed.
func hasRow(out string, cells ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		parts := strings.Split(line, "|")
		if len(parts) < len(cells) {
			continue
		}
		ok := true
		for i, c := range cells {
			if strings.TrimSpace(parts[i]) != c {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func mustHaveRow(t *testing.T, what, out string, cells ...string) {
	t.Helper()
	if !hasRow(out, cells...) {
		t.Errorf("%s: no row %q in:\n%s", what, cells, out)
	}
}

// The objects of the tests: a stream, a table with a primary key, an
// append-only table (a stream) and a materialized view.
var (
	tableDDL  = "CREATE TABLE accounts (id BIGINT PRIMARY KEY, name VARCHAR, balance NUMERIC(10,2), opened TIMESTAMP)"
	streamDDL = "CREATE STREAM orders (id BIGINT, customer VARCHAR(20), amount NUMERIC(10,2), ts TIMESTAMP, paid BOOLEAN, note TEXT) WITH (subject = 'psql.orders')"
	// pgStream is the stream as a PostgreSQL table, for the comparison.
	pgStream  = "CREATE TABLE orders (id BIGINT, customer VARCHAR(20), amount NUMERIC(10,2), ts TIMESTAMP, paid BOOLEAN, note TEXT)"
	appendDDL = "CREATE TABLE clicks (user_id INT, page TEXT, at TIMESTAMPTZ) APPEND ONLY"
	viewDDL   = "CREATE MATERIALIZED VIEW totals AS SELECT customer, count(*) AS n, sum(amount) AS total FROM orders GROUP BY customer"
)

func TestDescribe(t *testing.T) {
	bin := psqlBin(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	execAll(t, srv.Conn(t), streamDDL, tableDDL, appendDDL, viewDDL)
	run := func(c string) string { return runPsql(t, bin, srv.Port, "streamdb", c) }

	out := run(`\d`)
	mustHaveRow(t, `\d`, out, "public", "accounts", "table", "streamdb")
	mustHaveRow(t, `\d`, out, "public", "clicks", "table", "streamdb")
	mustHaveRow(t, `\d`, out, "public", "orders", "table", "streamdb")
	mustHaveRow(t, `\d`, out, "public", "totals", "materialized view", "streamdb")
	mustContain(t, `\d`, out, "(4 rows)")

	out = run(`\dt`)
	mustHaveRow(t, `\dt`, out, "public", "accounts", "table")
	mustHaveRow(t, `\dt`, out, "public", "orders", "table")
	mustContain(t, `\dt`, out, "(3 rows)")
	if strings.Contains(out, "totals") {
		t.Errorf(`\dt lists the materialized view:\n%s`, out)
	}

	out = run(`\dt+`)
	mustHaveRow(t, `\dt+`, out, "public", "orders", "table", "streamdb", "permanent", "heap", "", "stream on subject psql.orders")

	out = run(`\dm`)
	mustHaveRow(t, `\dm`, out, "public", "totals", "materialized view")
	mustContain(t, `\dm`, out, "(1 row)")

	// \dv lists plain views only; \d+ shows a view's definition and
	// comments.
	out = run(`\dv`)
	if strings.Contains(out, "totals") || strings.Contains(out, "orders") {
		t.Errorf(`\dv lists relations that are no views:\n%s`, out)
	}
	execAll(t, srv.Conn(t), "CREATE VIEW big AS SELECT id, name FROM accounts WHERE balance > 100",
		"COMMENT ON VIEW big IS 'rich accounts'", "COMMENT ON COLUMN big.name IS 'who'")
	out = run(`\dv+`)
	mustHaveRow(t, `\dv+`, out, "public", "big", "view", "streamdb", "permanent", "", "rich accounts")
	mustContain(t, `\dv+`, out, "(1 row)")
	out = run(`\d+ big`)
	mustContain(t, `\d+ big`, out, `View "public.big"`, "View definition:", "WHERE balance > 100")
	mustHaveRow(t, `\d+ big`, out, "name", "character varying", "", "", "", "extended", "who")
	execAll(t, srv.Conn(t), "DROP VIEW big")

	out = run(`\d accounts`)
	mustContain(t, `\d accounts`, out, `Table "public.accounts"`, "Indexes:", `"accounts_pkey" PRIMARY KEY, btree (id)`)
	mustHaveRow(t, `\d accounts`, out, "id", "bigint", "", "not null")
	mustHaveRow(t, `\d accounts`, out, "name", "character varying", "", "")
	mustHaveRow(t, `\d accounts`, out, "balance", "numeric(10,2)")
	mustHaveRow(t, `\d accounts`, out, "opened", "timestamp without time zone")

	out = run(`\d orders`)
	mustContain(t, `\d orders`, out, `Table "public.orders"`)
	mustHaveRow(t, `\d orders`, out, "customer", "character varying(20)")
	mustHaveRow(t, `\d orders`, out, "paid", "boolean")
	mustHaveRow(t, `\d orders`, out, "note", "text")

	out = run(`\d clicks`)
	mustHaveRow(t, `\d clicks`, out, "user_id", "integer")
	mustHaveRow(t, `\d clicks`, out, "at", "timestamp with time zone")

	out = run(`\d totals`)
	mustContain(t, `\d totals`, out, `Materialized view "public.totals"`)
	mustHaveRow(t, `\d totals`, out, "n", "bigint")
	mustHaveRow(t, `\d totals`, out, "total", "numeric")

	out = run(`\d+ totals`)
	mustContain(t, `\d+ totals`, out, "View definition:", "GROUP BY customer", "Access method: heap")
	mustHaveRow(t, `\d+ totals`, out, "customer", "character varying", "", "", "", "extended")

	out = run(`\d+ accounts`)
	mustHaveRow(t, `\d+ accounts`, out, "balance", "numeric(10,2)", "", "", "", "main")
	mustHaveRow(t, `\d+ accounts`, out, "id", "bigint", "", "not null", "", "plain")

	out = run(`\d *s`) // a pattern: every relation whose name ends in s
	mustContain(t, `\d *s`, out, `Table "public.accounts"`, `Table "public.orders"`, `Materialized view "public.totals"`, `Table "public.clicks"`)

	out = run(`\l`)
	mustHaveRow(t, `\l`, out, "streamdb", "streamdb", "UTF8")
	out = run(`\dn`)
	mustHaveRow(t, `\dn`, out, "public", "pg_database_owner")

	// Dropping an object takes it out of the catalog tables.
	execAll(t, srv.Conn(t), "DROP MATERIALIZED VIEW totals")
	out = run(`\d`)
	if strings.Contains(out, "totals") {
		t.Errorf(`\d after DROP still lists totals:\n%s`, out)
	}
}

// TestCatalogTables queries the pg_catalog and information_schema tables
// with plain SQL, as drivers and GUI tools do.
func TestCatalogTables(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	execAll(t, conn, streamDDL, tableDDL, viewDDL)
	query := func(sql string) [][]string {
		t.Helper()
		_, rows, err := testutil.QueryText(conn, 30*time.Second, sql, "NULL")
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return rows
	}
	join := func(rows [][]string) string {
		var lines []string
		for _, r := range rows {
			lines = append(lines, strings.Join(r, " "))
		}
		return strings.Join(lines, "\n")
	}
	check := func(sql, want string) {
		t.Helper()
		if got := join(query(sql)); got != want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", sql, got, want)
		}
	}
	check("SELECT relname, relkind FROM pg_catalog.pg_class WHERE relkind IN ('r', 'm') ORDER BY relname",
		"accounts r\norders r\ntotals m")
	check("SELECT c.relname, a.attname, t.typname, a.atttypmod FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "+
		"JOIN pg_type t ON t.oid = a.atttypid WHERE c.relname = 'orders' AND a.attnum BETWEEN 1 AND 3 ORDER BY a.attnum",
		"orders id int8 -1\norders customer varchar 24\norders amount numeric 655366")
	check("SELECT n.nspname FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid WHERE c.relname = 'totals'",
		"public")
	check("SELECT table_schema, table_name, table_type FROM information_schema.tables ORDER BY table_name",
		"public accounts BASE TABLE\npublic orders BASE TABLE\npublic totals VIEW")
	check("SELECT column_name, data_type, character_maximum_length, numeric_precision, numeric_scale, is_nullable "+
		"FROM information_schema.columns WHERE table_name = 'accounts' ORDER BY ordinal_position",
		"id bigint NULL 64 0 NO\nname character varying NULL NULL NULL YES\nbalance numeric NULL 10 2 YES\n"+
			"opened timestamp without time zone NULL NULL NULL YES")
	check("SELECT count(*) FROM information_schema.columns WHERE table_name = 'totals'", "3")
	check("SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a "+
		"JOIN pg_catalog.pg_class c ON c.oid = a.attrelid WHERE c.relname = 'orders' AND pg_catalog.pg_table_is_visible(c.oid) "+
		"AND a.attnum BETWEEN 1 AND 4 ORDER BY a.attnum",
		"id bigint\ncustomer character varying(20)\namount numeric(10,2)\nts timestamp without time zone")
}

// TestCompareWithPostgres creates the same tables in PostgreSQL and in
// streamdb and compares psql's \d and \d+ output line by line.
func TestCompareWithPostgres(t *testing.T) {
	bin := psqlBin(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	comments := []string{"COMMENT ON TABLE accounts IS 'the accounts'", "COMMENT ON COLUMN accounts.name IS 'who holds it'"}
	execAll(t, pg.Conn(t), append([]string{tableDDL, pgStream}, comments...)...)
	execAll(t, srv.Conn(t), append([]string{tableDDL, streamDDL}, comments...)...)
	for _, c := range []string{`\d accounts`, `\d+ accounts`, `\d orders`} {
		want := runPsql(t, bin, pg.Port, "postgres", c)
		got := runPsql(t, bin, srv.Port, "streamdb", c)
		if got != want {
			t.Errorf("%s differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", c, got, want)
		}
	}
	// \dt lists the same names and kinds (owners differ).
	want := runPsql(t, bin, pg.Port, "postgres", `\dt`)
	got := runPsql(t, bin, srv.Port, "streamdb", `\dt`)
	for _, name := range []string{"accounts", "orders"} {
		if !hasRow(want, "public", name, "table") || !hasRow(got, "public", name, "table") {
			t.Errorf(`\dt: %s missing\nstreamdb:\n%s\npostgres:\n%s`, name, got, want)
		}
	}
}
