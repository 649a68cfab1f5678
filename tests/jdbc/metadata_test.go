package jdbc

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// metadataSchema is the schema both servers get: a table with a primary
// key over columns of the common types.
const metadataSchema = "CREATE TABLE accounts (id int PRIMARY KEY, name varchar(20), balance numeric(10,2), opened timestamp, active boolean, note text)"

// publicLines keeps the header and the rows about schema public of a
// \meta answer (the system catalogs differ between the servers).
func publicLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "# ") || strings.Contains(l, "\tpublic\t") || l == "OK" || strings.HasPrefix(l, "ERROR") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestMetadataMatchesPostgres: DatabaseMetaData.getTables and getColumns
// answer for streamdb's tables and materialized views what they answer in
// PostgreSQL 15, through the catalog queries pgjdbc 42.5 sends (pg_class,
// pg_namespace, pg_description with a regclass cast, pg_attribute, pg_type,
// pg_attrdef, the ~ operator, a window function over a subquery), and
// getSchemas (current_schemas(true)[1], !~) lists PostgreSQL's three schemas.
func TestMetadataMatchesPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{metadataSchema, "CREATE MATERIALIZED VIEW acct_names AS SELECT id, name FROM accounts",
		`\meta getTables`, `\meta getColumns accounts`, `\meta getCatalogs`}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := testutil.RunJDBC(t, pgURL, script...)
	got := testutil.RunJDBC(t, sdbURL, script...)
	if strings.Contains(got, "ERROR") {
		t.Fatalf("streamdb:\n%s", got)
	}
	// getCatalogs names the database connected to; the rest must agree.
	want = strings.Replace(publicLines(want), "postgres", "streamdb", 1)
	if g := publicLines(got); g != want {
		t.Errorf("metadata differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", g, want)
	}
	schemas, pgSchemas := testutil.RunJDBC(t, sdbURL, `\meta getSchemas`), testutil.RunJDBC(t, pgURL, `\meta getSchemas`)
	if schemas != pgSchemas || !strings.Contains(schemas, "\npublic\tNULL\n") {
		t.Errorf("getSchemas:\n got %q\nPostgreSQL %q", schemas, pgSchemas)
	}
	for _, w := range []string{"\tpublic\taccounts\tTABLE\t", "\tpublic\tacct_names\tMATERIALIZED VIEW\t", "\tpublic\taccounts_pkey\tINDEX\t", "\taccounts\tbalance\t2\tnumeric\t10\t"} {
		if !strings.Contains(got, w) {
			t.Errorf("streamdb's metadata lacks %q:\n%s", w, got)
		}
	}
}

// TestPreparedParameters: setTimestamp, setBigDecimal, setBoolean and
// setString bind as parameters of an INSERT and of a SELECT's WHERE.
func TestPreparedParameters(t *testing.T) {
	testutil.JDBCJar(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	url := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	got := testutil.RunJDBC(t, url, metadataSchema,
		"\\prepare INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?)\tint:1\ttext:ann\tnumeric:12.50\ttimestamp:2024-01-02 03:04:05.25\tbool:true\tnull:",
		"\\prepare SELECT id, name, balance, opened, active, note FROM accounts WHERE opened = ? AND balance = ? AND active = ?\ttimestamp:2024-01-02 03:04:05.25\tnumeric:12.5\tbool:true",
		"\\prepare SELECT count(*) FROM accounts WHERE opened > ?\ttimestamp:2024-01-02 03:04:05.26",
	)
	want := "OK\nOK\n1\tann\t12.50\t2024-01-02 03:04:05.25\tt\tNULL\nOK\n0\nOK\n"
	if got != want {
		t.Fatalf("prepared statements:\n got %q\nwant %q", got, want)
	}
}
