package psql

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestDescribeConstraints: psql's \d of tables with UNIQUE, CHECK and
// FOREIGN KEY constraints shows what PostgreSQL's shows: the UNIQUE
// constraints under Indexes, Check constraints, Foreign-key constraints
// and, on the referenced table, Referenced by.
func TestDescribeConstraints(t *testing.T) {
	bin := psqlBin(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	ddl := []string{
		"CREATE TABLE dp (k int PRIMARY KEY, code text UNIQUE, a int, b int, CONSTRAINT ab UNIQUE (a, b))",
		"CREATE TABLE dc (id int PRIMARY KEY, p int REFERENCES dp ON DELETE CASCADE, n int CHECK (n > 0), m int, CHECK (n < m), CONSTRAINT by_code FOREIGN KEY (m) REFERENCES dc ON UPDATE SET NULL)",
	}
	execAll(t, pg.Conn(t), ddl...)
	execAll(t, srv.Conn(t), ddl...)
	for _, c := range []string{`\d dp`, `\d dc`} {
		want := runPsql(t, bin, pg.Port, "postgres", c)
		got := runPsql(t, bin, srv.Port, "streamdb", c)
		if got != want {
			t.Errorf("%s differs from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", c, got, want)
		}
	}
}
