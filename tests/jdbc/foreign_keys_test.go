package jdbc

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestForeignKeysMatchPostgres: DatabaseMetaData.getImportedKeys and
// getExportedKeys list a table's foreign keys (one and two columns, their
// rules) as PostgreSQL 15 lists them.
func TestForeignKeysMatchPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{
		"CREATE TABLE fk_parent (a int, b text, v int, PRIMARY KEY (a, b))",
		"CREATE TABLE fk_other (k int PRIMARY KEY)",
		"CREATE TABLE fk_child (id int PRIMARY KEY, pa int, pb text, o int REFERENCES fk_other ON DELETE CASCADE, FOREIGN KEY (pa, pb) REFERENCES fk_parent ON UPDATE SET NULL)",
		`\meta getImportedKeys fk_child`, `\meta getExportedKeys fk_parent`, `\meta getExportedKeys fk_other`,
		`\meta getImportedKeys fk_parent`,
	}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := strings.ReplaceAll(testutil.RunJDBC(t, pgURL, script...), "postgres\t", "streamdb\t")
	got := testutil.RunJDBC(t, sdbURL, script...)
	if got != want {
		t.Errorf("foreign keys differ from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	if !strings.Contains(got, "fk_child_pa_pb_fkey") {
		t.Errorf("getImportedKeys lacks the foreign key:\n%s", got)
	}
}
