package psql

import (
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestDescribeIndexes: psql's \d of a table with CREATE INDEX indexes
// (unique, several columns, DESC) lists them under "Indexes:" as
// PostgreSQL's does, and \di lists every index with its table.
func TestDescribeIndexes(t *testing.T) {
	bin := psqlBin(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	ddl := []string{
		"CREATE TABLE gadgets (id int PRIMARY KEY, name text, kind text, made date)",
		"CREATE INDEX gadgets_name ON gadgets (name)",
		"CREATE UNIQUE INDEX gadgets_kind_made ON gadgets (kind, made DESC)",
		"CREATE TABLE loose (a int, b int)",
		"CREATE INDEX ON loose (b NULLS FIRST)",
	}
	execAll(t, pg.Conn(t), ddl...)
	execAll(t, srv.Conn(t), ddl...)
	for _, c := range []string{`\d gadgets`, `\d loose`, `\di`} {
		// The owner is the connected user: postgres there, streamdb here.
		want := strings.ReplaceAll(runPsql(t, bin, pg.Port, "postgres", c), "| postgres |", "| streamdb |")
		got := runPsql(t, bin, srv.Port, "streamdb", c)
		if got != want {
			t.Errorf("%s differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", c, got, want)
		}
	}
}
