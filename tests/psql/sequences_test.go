package psql

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestDescribeDefaultsAndSequences: psql's \d of a table with a serial
// key, an identity column and a default shows what PostgreSQL's shows,
// and \ds and \d list the sequences.
func TestDescribeDefaultsAndSequences(t *testing.T) {
	bin := psqlBin(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	ddl := []string{
		"CREATE TABLE widgets (id serial PRIMARY KEY, code bigint GENERATED ALWAYS AS IDENTITY, qty int DEFAULT 1, note text DEFAULT 'n/a', since timestamptz DEFAULT now())",
		"CREATE SEQUENCE tickets",
	}
	execAll(t, pg.Conn(t), ddl...)
	execAll(t, srv.Conn(t), ddl...)
	want := runPsql(t, bin, pg.Port, "postgres", `\d widgets`)
	got := runPsql(t, bin, srv.Port, "streamdb", `\d widgets`)
	if got != want {
		t.Errorf("\\d widgets differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	for _, c := range []string{`\ds`, `\d`} {
		want := runPsql(t, bin, pg.Port, "postgres", c)
		got := runPsql(t, bin, srv.Port, "streamdb", c)
		for _, name := range []string{"tickets", "widgets_id_seq", "widgets_code_seq"} {
			if !hasRow(want, "public", name, "sequence") || !hasRow(got, "public", name, "sequence") {
				t.Errorf("%s: sequence %s missing\nstreamdb:\n%s\npostgres:\n%s", c, name, got, want)
			}
		}
	}
}
