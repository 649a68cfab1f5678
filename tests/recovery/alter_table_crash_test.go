package recovery

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestAlterTableSurvivesKill: rows written before and after ALTER TABLE
// adds, drops and renames columns, then kill -9. After the restart (which
// recovers from a checkpoint and reads the changelog past it, messages of
// both shapes) the tables and the views over them hold what they held
// before the kill, and later writes go on from there.
func TestAlterTableSurvivesKill(t *testing.T) {
	for _, interval := range []string{"0", "50ms"} {
		t.Run("checkpointing.interval="+interval, func(t *testing.T) {
			srv := startServer(t, testutil.ServerOptions{
				ConfigFile: writeConfig(t, "execution.checkpointing.interval="+interval)})
			conn := srv.Conn(t)
			testutil.MustExec(t, conn,
				`CREATE TABLE acct (id int PRIMARY KEY, name text, bal int)`,
				`CREATE TABLE bag (a int, b text)`,
				`INSERT INTO acct SELECT g, 'n' || g, g FROM generate_series(1, 500) g`,
				`INSERT INTO bag SELECT g % 10, 'b' || (g % 3) FROM generate_series(1, 300) g`,
				`CREATE MATERIALIZED VIEW acct_sum AS SELECT count(*) AS n, sum(bal) AS s FROM acct`,
				`CREATE MATERIALIZED VIEW acct_names AS SELECT id, name FROM acct WHERE id % 100 = 0`,
				`CREATE MATERIALIZED VIEW bag_count AS SELECT a, count(*) AS n FROM bag GROUP BY a`,
				`ALTER TABLE acct ADD COLUMN tier text DEFAULT 'basic', ADD COLUMN score int`,
				`ALTER TABLE bag DROP COLUMN b, ADD COLUMN c int DEFAULT 1`,
				`INSERT INTO acct SELECT g, 'n' || g, g, 'gold', g % 7 FROM generate_series(501, 600) g`,
				`UPDATE acct SET score = 1, bal = bal + 1 WHERE id <= 50`,
				`INSERT INTO bag SELECT g % 10, 2 FROM generate_series(1, 50) g`,
				`DELETE FROM bag WHERE a = 3`,
				`ALTER TABLE acct RENAME COLUMN name TO full_name`,
				`UPDATE acct SET full_name = upper(full_name) WHERE id IN (100, 600)`,
				`FLUSH`)
			queries := []string{
				`SELECT * FROM acct ORDER BY id`,
				`SELECT * FROM bag ORDER BY a, c`,
				`SELECT * FROM acct_sum`,
				`SELECT * FROM acct_names ORDER BY id`,
				`SELECT * FROM bag_count ORDER BY a`,
				`SELECT column_name, data_type, column_default FROM information_schema.columns WHERE table_name IN ('acct', 'bag') ORDER BY table_name, ordinal_position`,
			}
			before := snapshotQueries(t, conn, queries)
			wantRow(t, conn, `SELECT count(*), sum(bal), count(*) FILTER (WHERE tier = 'basic'), count(score) FROM acct`,
				fmt.Sprintf("600 %d 500 150", 600*601/2+50))
			wantRow(t, conn, `SELECT full_name FROM acct WHERE id = 100`, "N100")

			srv.Kill(t)
			srv.Restart(t)
			conn = srv.Conn(t)
			testutil.MustExec(t, conn, "FLUSH")
			after := snapshotQueries(t, conn, queries)
			for i, q := range queries {
				if !slices.Equal(before[i], after[i]) {
					t.Errorf("%s after kill -9 and restart:\n got %d rows: %s\nwant %d rows: %s", q,
						len(after[i]), clipRows(after[i]), len(before[i]), clipRows(before[i]))
				}
			}

			testutil.MustExec(t, conn,
				`INSERT INTO acct (id, full_name, bal) VALUES (601, 'late', 1000)`,
				`INSERT INTO bag VALUES (3, 9)`,
				`FLUSH`)
			wantRow(t, conn, `SELECT n, s FROM acct_sum`, fmt.Sprintf("601 %d", 600*601/2+50+1000))
			wantRow(t, conn, `SELECT tier, score FROM acct WHERE id = 601`, "basic \x00NULL")
			wantRow(t, conn, `SELECT n FROM bag_count WHERE a = 3`, "1")
		})
	}
}

func snapshotQueries(t *testing.T, conn *pgx.Conn, queries []string) [][]string {
	t.Helper()
	out := make([][]string, len(queries))
	for i, q := range queries {
		_, rows := mustQuery(t, conn, q)
		for _, r := range rows {
			out[i] = append(out[i], strings.Join(r, "|"))
		}
	}
	return out
}

func clipRows(rows []string) string {
	if len(rows) > 8 {
		return strings.Join(rows[:8], "; ") + "; ..."
	}
	return strings.Join(rows, "; ")
}
