package jdbc

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestJSONMatchesPostgres: pgjdbc binds json and jsonb parameters (a
// PGobject of that type, as setObject takes them) and text cast to
// jsonb, and reads json and jsonb columns with getObject, from streamdb
// as from PostgreSQL 15; getColumns describes them alike.
func TestJSONMatchesPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{
		`CREATE TABLE docs (id int PRIMARY KEY, j json, jb jsonb)`,
		"\\prepare INSERT INTO docs VALUES (?, ?, ?)\tint:1\tjson:{\"b\": 1, \"a\": [1, 2.5]}\tjsonb:{\"b\": 1, \"a\": [1, 2.5, \"é\"]}",
		"\\prepare INSERT INTO docs VALUES (?, ?, ?::jsonb)\tint:2\tnull:\ttext:null",
		"\\prepare SELECT id, jb ->> 'b', jb -> 'a' -> 2 FROM docs WHERE jb @> ?\tjsonb:{\"b\": 1}",
		"\\prepare SELECT ?::jsonb ->> 'k'\ttext:{\"k\": \"v\"}",
		`SELECT id, j, jb, jsonb_typeof(jb) FROM docs ORDER BY id`,
		`\meta getColumns docs`,
	}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := publicOrData(testutil.RunJDBC(t, pgURL, script...))
	got := publicOrData(testutil.RunJDBC(t, sdbURL, script...))
	want = strings.ReplaceAll(want, "postgres\t", "streamdb\t")
	if got != want {
		t.Errorf("JDBC answers differ from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	for _, w := range []string{`{"a": [1, 2.5, "é"], "b": 1}`, "\tjb\t1111\tjsonb\t"} {
		if !strings.Contains(got, w) {
			t.Errorf("streamdb's answers lack %q:\n%s", w, got)
		}
	}
}
