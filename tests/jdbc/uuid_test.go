package jdbc

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestUUIDMatchesPostgres: pgjdbc binds a java.util.UUID with setObject
// (as a uuid parameter), reads uuid columns back with getObject as
// java.util.UUID and uuid[] with getArray, from streamdb as from
// PostgreSQL 15; getColumns describes a uuid column alike.
func TestUUIDMatchesPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{
		`CREATE TABLE ids (id uuid PRIMARY KEY, n int)`,
		"\\prepare INSERT INTO ids VALUES (?, ?)\tuuid:A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11\tint:1",
		"\\prepare INSERT INTO ids VALUES (?, ?)\tuuid:00000000-0000-0000-0000-000000000001\tint:2",
		"\\prepare INSERT INTO ids VALUES (?, ?)\tuuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\tint:3",
		"\\prepare SELECT id, n FROM ids WHERE id = ?\tuuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		"\\prepare SELECT ?::text\tuuid:ffffffff-ffff-ffff-ffff-ffffffffffff",
		`SELECT id, n FROM ids ORDER BY id`,
		`SELECT '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'::uuid[], gen_random_uuid() IS NOT NULL`,
		`\meta getColumns ids`,
	}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := publicOrData(testutil.RunJDBC(t, pgURL, script...))
	got := publicOrData(testutil.RunJDBC(t, sdbURL, script...))
	want = strings.ReplaceAll(want, "postgres\t", "streamdb\t")
	if got != want {
		t.Errorf("JDBC answers differ from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	for _, w := range []string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 java.util.UUID\t1", "ERROR 23505",
		"[a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11, null]", "\tid\t1111\tuuid\t"} {
		if !strings.Contains(got, w) {
			t.Errorf("streamdb's answers lack %q:\n%s", w, got)
		}
	}
}
