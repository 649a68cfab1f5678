package e2e

import "testing"

// TestTopNWithTiesSurvivesRestart checks that FETCH ... WITH TIES views
// keep their state across a clean restart and a crash: over a stream
// (whose top-N drops rows that can no longer enter) new rows join or end
// the tie at the boundary, and over a table deletes let in the rows below
// the boundary that were held before the restart. The expected rows are
// PostgreSQL 15's for the same statements.
func TestTopNWithTiesSurvivesRestart(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		`CREATE STREAM tpts (player VARCHAR, points INT) WITH (subject = 'e2e.topnties', format = 'json')`,
		`CREATE MATERIALIZED VIEW tbest AS SELECT player, points FROM tpts ORDER BY points DESC FETCH FIRST 2 ROWS WITH TIES`,
		`CREATE TABLE tscores (k INT PRIMARY KEY, points INT)`,
		`CREATE MATERIALIZED VIEW tlead AS SELECT k, points FROM tscores ORDER BY points DESC FETCH FIRST 1 ROW WITH TIES`,
		`INSERT INTO tpts VALUES ('a', 10), ('b', 20), ('c', 20), ('d', 5)`,
		`INSERT INTO tscores VALUES (1, 10), (2, 20), (3, 20), (4, 5)`,
	)
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM tbest ORDER BY player", "b 20", "c 20")
	wantRows(t, conn, "SELECT * FROM tlead ORDER BY k", "2 20", "3 20")

	srv.Restart(t)
	conn = srv.Conn(t)
	exec(t, conn,
		`INSERT INTO tpts VALUES ('e', 20), ('f', 30)`,
		`DELETE FROM tscores WHERE k = 2`,
	)
	flush(t, conn)
	// The second row is a 20: every 20 ties with it.
	wantRows(t, conn, "SELECT * FROM tbest ORDER BY player", "b 20", "c 20", "e 20", "f 30")
	wantRows(t, conn, "SELECT * FROM tlead ORDER BY k", "3 20")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	exec(t, conn,
		`INSERT INTO tpts VALUES ('g', 30)`,
		`DELETE FROM tscores WHERE k = 3`,
	)
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM tbest ORDER BY player", "f 30", "g 30")
	// 1 (10), held below the boundary since before both restarts, leads.
	wantRows(t, conn, "SELECT * FROM tlead ORDER BY k", "1 10")
	exec(t, conn, `UPDATE tscores SET points = 10 WHERE k = 4`, `INSERT INTO tscores VALUES (5, 10), (6, 9)`)
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM tlead ORDER BY k", "1 10", "4 10", "5 10")
}
