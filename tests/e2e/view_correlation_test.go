package e2e

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// nonEqualityViews are views whose subqueries correlate with the outer
// row by conditions other than equality (alone, or beside an equality),
// over the tables o and i and the stream ev of startSemiJoinTables, and
// views with subqueries in JOIN ... ON.
var nonEqualityViews = map[string]string{
	"nq_count":      "SELECT id, (SELECT count(*) FROM o AS p WHERE p.x < o.x) AS n FROM o",
	"nq_sum_min":    "SELECT id, (SELECT sum(y) FROM i WHERE i.y <= o.x) AS s, (SELECT min(y) FROM i WHERE i.k = o.k AND i.y > o.x) AS m FROM o",
	"nq_max_avg":    "SELECT id, (SELECT max(y) FROM ev WHERE ev.y < o.x) AS m, (SELECT avg(y) FROM i WHERE i.k <> o.k) > 2 AS a FROM o",
	"nq_count_two":  "SELECT id, (SELECT count(y) FROM i WHERE i.k >= o.k AND i.y + 1 < o.x * 2) AS n FROM o",
	"nq_exists":     "SELECT id, x FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.k = o.k AND i.y > o.x)",
	"nq_not_exists": "SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM ev WHERE ev.k = o.k AND ev.y >= o.x)",
	"nq_exists_sel": "SELECT id, EXISTS (SELECT 1 FROM i WHERE i.y < o.x) AS e, NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.k AND i.y <> o.x) AS ne FROM o",
	"nq_in":         "SELECT id FROM o WHERE x IN (SELECT y FROM i WHERE i.k < o.k)",
	"nq_not_in":     "SELECT id FROM o WHERE x NOT IN (SELECT y FROM i WHERE i.k >= o.k)",
	"nq_not_in_sel": "SELECT id, x NOT IN (SELECT y FROM ev WHERE ev.k > o.k) AS r, x IN (SELECT y FROM i WHERE i.k = o.k AND i.id > o.id) AS r2 FROM o",
	"nq_all_any":    "SELECT id, x < ALL (SELECT y FROM i WHERE i.k <= o.k) AS lt_all, x > ANY (SELECT y FROM ev WHERE ev.k = o.k AND ev.y <> o.k) AS gt_any FROM o",
	"nq_stream_out": "SELECT k, y FROM ev WHERE y > (SELECT count(*) FROM i WHERE i.y < ev.y)",
	"nq_having":     "SELECT k, count(*) AS n FROM o GROUP BY k HAVING count(*) >= (SELECT count(*) FROM i WHERE i.k > o.k)",
	"nq_on":         "SELECT o.id, i.id AS iid FROM o JOIN i ON o.k = i.k AND EXISTS (SELECT 1 FROM ev WHERE ev.y < o.x AND ev.k = i.y)",
	"nq_left_on":    "SELECT o.id, i.id AS iid FROM o LEFT JOIN i ON o.k = i.k AND i.y NOT IN (SELECT y FROM ev)",
	"nq_nested":     "SELECT id FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.k < o.k AND i.y NOT IN (SELECT y FROM ev WHERE ev.k > i.id))",
}

// TestViewNonEqualityCorrelationLikePostgres: materialized views with
// subqueries correlated by <, <=, >, >=, <> and arithmetic (count, sum,
// min, max, avg, EXISTS, NOT EXISTS, IN, NOT IN, ANY and ALL), over
// tables and a stream and with subqueries in JOIN ... ON, equal
// PostgreSQL views of the same queries after each of several rounds of
// random inserts, updates and deletes with NULLs on both sides. EXPLAIN
// says how the correlation is run, and a correlation whose NULLs would
// match is refused. SEMIJOIN_SEED replays a run.
func TestViewNonEqualityCorrelationLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, r := startSemiJoinTables(t, "TestViewNonEqualityCorrelationLikePostgres")
	createViewsBoth(t, sdb, ref, nonEqualityViews)
	for q, want := range map[string]string{
		nonEqualityViews["nq_count"]:  "Nested Loop Join (no key",
		nonEqualityViews["nq_exists"]: "Join of the distinct outer values on the equalities, filtered by (y > outer.o.x)",
	} {
		plan := strings.Join(textRows(t, sdb, "EXPLAIN CREATE MATERIALIZED VIEW nq_explain AS "+q), "\n")
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN of %s does not show %q:\n%s", q, want, plan)
		}
	}
	semiJoinRounds(t, sdb, ref, r, nonEqualityViews)
}

// TestViewNonEqualityCorrelationSurvivesCrash: a view with a count over
// a correlation without equality and a NOT EXISTS with one beside an
// inequality recovers its state from the checkpoint after kill -9 and
// stays equal to PostgreSQL through changes before the checkpoint,
// between it and the crash, and after the restart.
func TestViewNonEqualityCorrelationSurvivesCrash(t *testing.T) {
	t.Parallel()
	var sdb *pgx.Conn
	srv, ref, check := startCrashCheckedView(t, &sdb, "nq",
		`SELECT id, (SELECT count(*) FROM i WHERE i.y < o.x) AS n FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.k AND i.y >= o.x)`,
		"INSERT INTO o VALUES (1, 1, 10), (2, 2, 20), (3, 3, NULL), (4, NULL, 40), (5, 5, 50)",
		"INSERT INTO i VALUES (1, 1, 99), (2, 2, NULL), (3, 5, 5)")
	check("after CREATE")
	execBoth(t, sdb, ref, "UPDATE i SET y = 15 WHERE id = 2", "DELETE FROM i WHERE id = 1", "INSERT INTO o VALUES (6, 1, 60)")
	exec(t, sdb, "CHECKPOINT")
	check("at the checkpoint")
	// After the checkpoint, before the crash: replayed from the changelogs.
	execBoth(t, sdb, ref, "INSERT INTO i VALUES (4, 5, 60), (5, NULL, 30)", "DELETE FROM o WHERE id = 2")
	check("before the crash")
	srv.Kill(t)
	srv.Restart(t)
	sdb = srv.Conn(t)
	check("after the restart")
	execBoth(t, sdb, ref, "DELETE FROM i WHERE id = 4", "INSERT INTO i VALUES (6, 3, 1)", "UPDATE o SET x = 9 WHERE id = 3",
		"INSERT INTO o VALUES (7, 8, NULL)", "UPDATE i SET y = 45 WHERE id = 5")
	check("after changes following the restart")
	execBoth(t, sdb, ref, "DELETE FROM i")
	check("with the inner table emptied")
}
