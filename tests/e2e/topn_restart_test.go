package e2e

import "testing"

// TestTopNSurvivesRestart checks that top-N views keep their state across
// a clean restart and a crash: after each, new input that pushes rows out
// of the top (and lowers a total, letting rows back in) gives the rows
// PostgreSQL would return, which needs the rows below the top that were
// held before the restart.
func TestTopNSurvivesRestart(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		`CREATE STREAM pts (player VARCHAR, game VARCHAR, points INT) WITH (subject = 'e2e.topn', format = 'json')`,
		`CREATE MATERIALIZED VIEW leaders AS
		   SELECT player, sum(points) AS total FROM pts GROUP BY player ORDER BY sum(points) DESC, player LIMIT 2`,
		`CREATE MATERIALIZED VIEW best AS
		   SELECT game, player, points, rn FROM (
		     SELECT game, player, points, row_number() OVER (PARTITION BY game ORDER BY points DESC, player) AS rn FROM pts
		   ) t WHERE rn <= 2`,
		`INSERT INTO pts VALUES ('ann', 'go', 10), ('bob', 'go', 20), ('cy', 'go', 30), ('dee', 'chess', 5)`,
	)
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM leaders ORDER BY total DESC", "cy 30", "bob 20")
	wantRows(t, conn, "SELECT * FROM best ORDER BY game, rn", "chess dee 5 1", "go cy 30 1", "go bob 20 2")

	srv.Restart(t)
	conn = srv.Conn(t)
	// cy's total drops to 0 and leaves the top; eve enters it.
	exec(t, conn, `INSERT INTO pts VALUES ('cy', 'chess', -30), ('eve', 'go', 25)`)
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM leaders ORDER BY total DESC", "eve 25", "bob 20")
	wantRows(t, conn, "SELECT * FROM best ORDER BY game, rn", "chess dee 5 1", "chess cy -30 2", "go cy 30 1", "go eve 25 2")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	exec(t, conn, `INSERT INTO pts VALUES ('eve', 'chess', -40), ('bob', 'chess', -15)`)
	flush(t, conn)
	// Totals: ann 10, bob 5, cy 0, dee 5, eve -15: ann, held below the
	// top since before both restarts, enters it.
	wantRows(t, conn, "SELECT * FROM leaders ORDER BY total DESC, player", "ann 10", "bob 5")
	wantRows(t, conn, "SELECT * FROM best ORDER BY game, rn", "chess dee 5 1", "chess bob -15 2", "go cy 30 1", "go eve 25 2")
}
