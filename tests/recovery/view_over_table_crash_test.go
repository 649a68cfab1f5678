package recovery

import (
	"fmt"
	"testing"

	"streamdb/tests/testutil"
)

// TestViewOverTableSurvivesCrashAfterCreate kills the server right after
// CREATE MATERIALIZED VIEW over tables returns. A view over tables reads
// their changes through edges and takes in their rows at the barrier it
// attaches at, after the checkpoint its CREATE takes; recovery from that
// checkpoint (or a periodic one before the attach committed) must populate
// it again rather than resume it empty with only later changes.
func TestViewOverTableSurvivesCrashAfterCreate(t *testing.T) {
	for _, interval := range []string{"0", "50ms"} {
		t.Run("checkpointing.interval="+interval, func(t *testing.T) {
			srv := startServer(t, testutil.ServerOptions{
				ConfigFile: writeConfig(t, "execution.checkpointing.interval="+interval)})
			conn := srv.Conn(t)
			testutil.MustExec(t, conn,
				`CREATE TABLE big (id INT PRIMARY KEY, k INT, v INT)`,
				`CREATE TABLE dim (k INT PRIMARY KEY, name TEXT)`,
				`INSERT INTO dim SELECT g, 'k' || g FROM generate_series(0, 6) g`)
			const rows, per = 120000, 20000
			for from := 1; from <= rows; from += per {
				testutil.MustExec(t, conn, fmt.Sprintf(
					`INSERT INTO big SELECT g, g %% 7, g FROM generate_series(%d, %d) g`, from, from+per-1))
			}
			testutil.MustExec(t, conn,
				`CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n, sum(v) AS s FROM big GROUP BY k`)
			srv.Kill(t)
			srv.Restart(t)
			conn = srv.Conn(t)
			testutil.MustExec(t, conn, "FLUSH")
			const perK = `SELECT count(*), sum(n), sum(s) FROM per_k`
			want := fmt.Sprintf("7 %d %d", rows, sumRange(1, rows))
			wantRow(t, conn, perK, want)

			testutil.MustExec(t, conn,
				`CREATE MATERIALIZED VIEW named AS SELECT d.name, count(*) AS n FROM big b JOIN dim d ON b.k = d.k GROUP BY d.name`)
			srv.Kill(t)
			srv.Restart(t)
			conn = srv.Conn(t)
			testutil.MustExec(t, conn, "FLUSH")
			wantRow(t, conn, `SELECT count(*), sum(n) FROM named`, fmt.Sprintf("7 %d", rows))
			wantRow(t, conn, perK, want)

			// Later writes add to the whole result, not to an empty one.
			testutil.MustExec(t, conn, `INSERT INTO big VALUES (0, 1, 0)`, "FLUSH")
			ones := testutil.Scalar(t, conn, `SELECT count(*) FROM big WHERE k = 1`)
			if ones != fmt.Sprint((rows+6)/7+1) {
				t.Fatalf("the table holds %s rows of k = 1, want %d", ones, (rows+6)/7+1)
			}
			wantRow(t, conn, `SELECT n FROM per_k WHERE k = 1`, ones)
			wantRow(t, conn, `SELECT n FROM named WHERE name = 'k1'`, ones)
		})
	}
}
