package e2e

import (
	"regexp"
	"testing"

	"streamdb/tests/testutil"
)

// TestAlterViewRollback: ROLLBACK TO the savepoint an ALTER names in its
// NOTICE undoes the ALTER: the view has its old query again, and it and a
// view reading it hold what PostgreSQL computes with the old query over
// every event, those sent after the ALTER too (replayed from JetStream).
func TestAlterViewRollback(t *testing.T) {
	p := startAlterPair(t, "alterrb.ev")
	const old = `SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k`
	p.view(t, "totals", old)
	p.view(t, "big", `SELECT count(*) AS groups, sum(c) AS c, sum(s) AS s FROM totals`)
	check := func() {
		t.Helper()
		p.same(t, `SELECT k, c, s FROM totals`, `SELECT groups, c, s FROM big`)
	}
	p.send(t, 300)
	check()
	before := testutil.ViewDefinition(t, p.sdb, "totals")

	for len(p.notices) > 0 {
		<-p.notices
	}
	p.alter(t, "totals", "", `SELECT k, count(*) AS c, sum(n) AS s FROM ev WHERE k <> 'k0' GROUP BY k HAVING sum(n) > 0`)
	var point string
	for len(p.notices) > 0 && point == "" {
		if m := regexp.MustCompile(`^savepoint (\S+) holds the state before this change`).FindStringSubmatch(<-p.notices); m != nil {
			point = m[1]
		}
	}
	if point == "" {
		t.Fatal("ALTER sent no NOTICE naming its savepoint")
	}
	p.send(t, 50)
	check()

	exec(t, p.sdb, "ROLLBACK TO SAVEPOINT "+point)
	exec(t, p.ref, "CREATE OR REPLACE VIEW totals AS "+old)
	if after := testutil.ViewDefinition(t, p.sdb, "totals"); after != before {
		t.Errorf("definition after ROLLBACK TO: %q, before the ALTER: %q", after, before)
	}
	check()
	p.send(t, 20)
	check()
}
