package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestLongSourceNames uses PostgreSQL's longest identifier (63 bytes) for
// a stream, a table and a view over both: writes, reads, a restart, SHOW
// and the streamdb_* tables must all work with the whole names, and the
// names streamdb derives from them (the primary key) must fit in 63
// bytes as PostgreSQL's do.
func TestLongSourceNames(t *testing.T) {
	st, tb, vw := strings.Repeat("s", 63), strings.Repeat("t", 63), strings.Repeat("v", 63)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		fmt.Sprintf("CREATE STREAM %s (k bigint, v bigint) WITH (subject = 'e2e.long')", st),
		fmt.Sprintf("CREATE TABLE %s (k bigint PRIMARY KEY, v bigint)", tb),
		fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS SELECT s.k, s.v + coalesce(t.v, 0) AS w FROM %s s LEFT JOIN %s t ON s.k = t.k", vw, st, tb),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 10), (2, 20)", st),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 100)", tb),
	)
	wantRows(t, conn, "SELECT * FROM "+vw+" ORDER BY k", "1 110", "2 20")
	wantRows(t, conn, "SELECT conname FROM pg_constraint WHERE conrelid = '"+tb+"'::regclass", strings.Repeat("t", 58)+"_pkey")

	srv.Restart(t)
	conn = srv.Conn(t)
	exec(t, conn,
		fmt.Sprintf("INSERT INTO %s VALUES (3, 30)", st),
		fmt.Sprintf("INSERT INTO %s VALUES (2, 200)", tb),
	)
	wantRows(t, conn, "SELECT * FROM "+vw+" ORDER BY k", "1 110", "2 220", "3 30")
	for _, c := range []struct{ show, want string }{{"SHOW STREAMS", st}, {"SHOW TABLES", tb}, {"SHOW MATERIALIZED VIEWS", vw}} {
		rows := textRows(t, conn, c.show)
		if len(rows) != 1 || strings.Fields(rows[0])[0] != c.want {
			t.Errorf("%s: %q, want one row of %s", c.show, rows, c.want)
		}
	}
	wantRows(t, conn, "SELECT object, reads FROM streamdb_dependencies ORDER BY reads", vw+" "+st, vw+" "+tb)
	wantRows(t, conn, "SELECT DISTINCT object FROM streamdb_state ORDER BY object", tb, vw)
	wantRows(t, conn, "SELECT DISTINCT view FROM streamdb_operators ORDER BY view", tb, vw)
}
