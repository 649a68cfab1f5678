package e2e

import (
	"strings"
	"testing"
)

// TestAlterViewBackfillDependents: an ALTER that changes the aggregate (a
// filter below it) while JetStream still holds the stream's history
// backfills the view from JetStream; the view and two views reading it
// (an aggregate and a filter) follow the change, old rows retracted and
// new ones inserted, as PostgreSQL computes the new query over every
// event.
func TestAlterViewBackfillDependents(t *testing.T) {
	p := startAlterPair(t, "alterbf.ev")
	p.view(t, "totals", `SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k`)
	p.view(t, "big", `SELECT count(*) AS groups, sum(c) AS c, sum(s) AS s FROM totals`)
	p.view(t, "wide", `SELECT k, s FROM totals WHERE c > 70`)
	check := func() {
		t.Helper()
		p.same(t, `SELECT k, c, s FROM totals`, `SELECT groups, c, s FROM big`, `SELECT k, s FROM wide`)
	}
	p.send(t, 400)
	check()

	// Every event of k0 has n % 5 = 0: k0 leaves, the others lose a fifth.
	filtered := `SELECT k, count(*) AS c, sum(n) AS s FROM ev WHERE n % 5 <> 0 OR n % 3 = 0 GROUP BY k`
	explain := strings.Join(textRows(t, p.sdb, `EXPLAIN ALTER MATERIALIZED VIEW totals AS `+filtered), "\n")
	if !strings.Contains(explain, "backfilled") || strings.Contains(explain, "refused") {
		t.Fatalf("EXPLAIN ALTER does not backfill the aggregate:\n%s", explain)
	}
	p.alter(t, "totals", "", filtered)
	check()
	p.send(t, 100)
	check()
}
