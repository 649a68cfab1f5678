package jdbc

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestIndexInfoMatchesPostgres: getIndexInfo lists CREATE INDEX indexes
// (unique or not, several columns, DESC) besides the primary key, as
// PostgreSQL 15 does; with unique = true only the unique ones.
func TestIndexInfoMatchesPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{metadataSchema,
		"CREATE INDEX accounts_name ON accounts (name)",
		"CREATE UNIQUE INDEX accounts_note_opened ON accounts (note DESC, opened)",
		"CREATE TABLE plain (a int, b text)",
		"CREATE INDEX plain_b_a ON plain (b, a)",
		`\meta getIndexInfo accounts`, `\meta getIndexInfo plain`}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := testutil.RunJDBC(t, pgURL, script...)
	got := testutil.RunJDBC(t, sdbURL, script...)
	want = strings.ReplaceAll(want, "postgres\t", "streamdb\t")
	if got != want {
		t.Errorf("getIndexInfo differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	if !strings.Contains(got, "accounts_note_opened") || !strings.Contains(got, "plain_b_a") {
		t.Errorf("getIndexInfo lacks the CREATE INDEX indexes:\n%s", got)
	}
}
