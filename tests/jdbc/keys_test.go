package jdbc

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestKeysAndTypesMatchPostgres: DatabaseMetaData.getPrimaryKeys,
// getIndexInfo and getTypeInfo answer for streamdb's tables what they
// answer in PostgreSQL 15 (getTypeInfo for the types both servers have).
func TestKeysAndTypesMatchPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	schema := []string{metadataSchema, "CREATE TABLE pairs (a int, b text NOT NULL, c int, PRIMARY KEY (c, a))"}
	script := append(schema, `\meta getPrimaryKeys accounts`, `\meta getPrimaryKeys pairs`,
		`\meta getIndexInfo accounts`, `\meta getIndexInfo pairs`)
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := testutil.RunJDBC(t, pgURL, script...)
	got := testutil.RunJDBC(t, sdbURL, script...)
	want = strings.ReplaceAll(want, "postgres\t", "streamdb\t")
	if got != want {
		t.Errorf("keys differ from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	// getTypeInfo: every type streamdb lists, PostgreSQL lists the same.
	types := testutil.RunJDBC(t, sdbURL, `\meta getTypeInfo`)
	pgTypes := strings.Split(testutil.RunJDBC(t, pgURL, `\meta getTypeInfo`), "\n")
	lines := strings.Split(types, "\n")
	if len(lines) < 20 || !strings.HasPrefix(lines[0], "# TYPE_NAME\tDATA_TYPE") {
		t.Fatalf("getTypeInfo:\n%s", types)
	}
	for _, l := range lines {
		if !slices.Contains(pgTypes, l) {
			t.Errorf("getTypeInfo row %q is not PostgreSQL's", l)
		}
	}
}
