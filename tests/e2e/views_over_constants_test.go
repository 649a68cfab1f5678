package e2e

import (
	"testing"
)

// TestViewsOverConstantsKeepTheirRows: a view over VALUES sends its rows
// once: a restart (clean or killed) and an ALTER that keeps the aggregate
// above the VALUES do not send them again (the totals would double); an
// ALTER of a view whose rows come straight from VALUES shows the new rows
// and the view reading it follows.
func TestViewsOverConstantsKeepTheirRows(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		`CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(x) AS s FROM (VALUES (1), (2), (3)) v(x)`,
		`CREATE MATERIALIZED VIEW pairs AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(x, y)`,
		`CREATE MATERIALIZED VIEW per_y AS SELECT y, count(*) AS n, sum(x) AS s FROM pairs GROUP BY y`)
	check := func(totals string, pairs, perY []string) {
		t.Helper()
		wantRows(t, conn, `SELECT n, s FROM totals`, totals)
		wantRows(t, conn, `SELECT x, y FROM pairs ORDER BY x`, pairs...)
		wantRows(t, conn, `SELECT y, n, s FROM per_y ORDER BY y`, perY...)
	}
	check("3 6", []string{"1 a", "2 b"}, []string{"a 1 1", "b 1 2"})

	srv.Restart(t)
	conn = srv.Conn(t)
	check("3 6", []string{"1 a", "2 b"}, []string{"a 1 1", "b 1 2"})

	exec(t, conn, `ALTER MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(x) AS s FROM (VALUES (1), (2), (3)) v(x) HAVING count(*) > 0`,
		`CREATE OR REPLACE MATERIALIZED VIEW pairs AS SELECT * FROM (VALUES (3, 'a'), (4, 'b'), (5, 'b')) v(x, y)`)
	check("3 6", []string{"3 a", "4 b", "5 b"}, []string{"a 1 3", "b 2 9"})

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	flush(t, conn)
	check("3 6", []string{"3 a", "4 b", "5 b"}, []string{"a 1 3", "b 2 9"})
}
