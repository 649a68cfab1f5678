package e2e

import (
	"strings"
	"testing"
)

// TestAlteredViewRestarts: views altered keeping their operators' state,
// and one rebuilt by its ALTER, find their state tables by operator id
// after a restart. spread's two aggregates (the outer one, with min and
// max over the inner one's retracting counts, keeps two state tables)
// survive an ALTER that adds a HAVING; top_max gains a top-N, so it is
// backfilled with a layout of its own. After the restart both answer as
// PostgreSQL does over every event, and go on counting new ones.
func TestAlteredViewRestarts(t *testing.T) {
	p := startAlterPair(t, "alter.restart.ev")
	const spread = `SELECT min(c) AS lo, max(c) AS hi, count(*) AS groups FROM (SELECT k, count(*) AS c FROM ev GROUP BY k) t`
	const perK = `SELECT k, max(n) AS m FROM ev GROUP BY k`
	p.event = func(i int) (string, int64) { return []string{"a", "b", "b", "c", "c", "c"}[i%6], int64(i) }
	p.view(t, "spread", spread)
	p.view(t, "top_max", perK)
	queries := []string{`SELECT lo, hi, groups FROM spread`, `SELECT k, m FROM top_max`}
	p.send(t, 120)
	p.same(t, queries...)

	explain := strings.Join(textRows(t, p.sdb, `EXPLAIN ALTER MATERIALIZED VIEW spread AS `+spread+` HAVING count(*) > 0`), "\n")
	if strings.Count(explain, ": kept") != 2 {
		t.Fatalf("EXPLAIN ALTER does not keep both aggregates:\n%s", explain)
	}
	p.alter(t, "spread", "", spread+` HAVING count(*) > 0`)
	p.alter(t, "top_max", "", `SELECT k, m FROM (`+perK+`) t ORDER BY m DESC LIMIT 2`)
	p.send(t, 30)
	p.same(t, queries...)

	p.srv.Stop(t)
	p.srv.Restart(t)
	p.sdb = p.srv.Conn(t)
	p.same(t, queries...)
	p.send(t, 45)
	p.same(t, queries...)
}
