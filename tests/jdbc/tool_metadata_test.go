package jdbc

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestResultSetMetadataMatchesPostgres: ResultSetMetaData of queries on
// tables (one, filtered and sorted, joined) and a materialized view names
// each column's table and reads the declared precision and scale
// (numeric(12,3), varchar(20), char(3)) as from PostgreSQL 15, through
// RowDescription's table OID, column number and type modifier; computed
// columns have no table.
func TestResultSetMetadataMatchesPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{
		"CREATE TABLE sized (id int PRIMARY KEY, name varchar(20), amount numeric(12,3), code char(3), note text)",
		"CREATE TABLE other (k int PRIMARY KEY, label varchar(5))",
		"CREATE MATERIALIZED VIEW sized_names AS SELECT id, name FROM sized",
		`\rsmeta SELECT * FROM sized`,
		`\rsmeta SELECT amount, id + 1 AS next, name AS renamed, upper(name) FROM sized WHERE id > 0 ORDER BY id LIMIT 5`,
		`\rsmeta SELECT s.name, o.label FROM sized s JOIN other o ON o.k = s.id`,
		`\rsmeta SELECT id FROM sized_names`,
	}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := testutil.RunJDBC(t, pgURL, script...)
	got := testutil.RunJDBC(t, sdbURL, script...)
	if got != want {
		t.Errorf("result set metadata differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	if !strings.Contains(got, "amount\tamount\tsized\t\tnumeric\t12\t3\t") {
		t.Errorf("numeric(12,3) column not described:\n%s", got)
	}
}

// TestKeysMetadataRuns: DatabaseMetaData.getImportedKeys and
// getExportedKeys answer as PostgreSQL 15 does for tables without foreign
// keys (no rows), and getIndexInfo lists the primary key's index.
func TestKeysMetadataRuns(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{metadataSchema,
		`\meta getImportedKeys accounts`, `\meta getExportedKeys accounts`, `\meta getIndexInfo accounts`,
		`\meta getPrimaryKeys accounts`}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := strings.ReplaceAll(testutil.RunJDBC(t, pgURL, script...), "postgres\t", "streamdb\t")
	got := testutil.RunJDBC(t, sdbURL, script...)
	if got != want {
		t.Errorf("keys metadata differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	if !strings.Contains(got, "accounts_pkey") {
		t.Errorf("getIndexInfo lacks the primary key's index:\n%s", got)
	}
}
