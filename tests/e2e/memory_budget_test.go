package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestMemoryBudgetSharedByViews checks that the state caches of running
// views share state.memory.budget: each top-N view keeps at most its
// share of rows in memory (streamdb_topn_state_rows, against
// streamdb_state_cache_limit_entries), which is more than an equal share
// when other caches hold little, shrinks as views are created and grows
// back when they are dropped, and SHOW reports the
// setting; a quarter of the budget goes to Pebble's block cache, whose
// limit follows ALTER SYSTEM. The top-Ns rank 500 partitions of a table of 3,000 rows, which
// no cut to the ranked rows alone brings under the share: only evicting
// partitions does.
func TestMemoryBudgetSharedByViews(t *testing.T) {
	const budget = 1_000_000
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{
		fmt.Sprintf("STREAMDB_STATE_MEMORY_BUDGET=%d", budget),
		"STREAMDB_STATE_CACHE_TOPN_ROWS_PER_OPERATOR=1000000",
	}})
	conn := srv.Conn(t)
	wantRows(t, conn, "SHOW state.memory.budget", fmt.Sprint(budget))
	exec(t, conn, "CREATE TABLE bt (id INT PRIMARY KEY, v INT)")
	for chunk := range 6 {
		var vals []string
		for i := chunk * 500; i < (chunk+1)*500; i++ {
			vals = append(vals, fmt.Sprintf("(%d, %d)", i, (i*7919)%1000))
		}
		exec(t, conn, "INSERT INTO bt VALUES "+strings.Join(vals, ", "))
	}
	view := func(i int) string {
		return fmt.Sprintf("CREATE MATERIALIZED VIEW bt_top%d AS SELECT g, id, v, rn FROM (SELECT id %% 500 AS g, id, v, "+
			"row_number() OVER (PARTITION BY id %% 500 ORDER BY v + %d, id) AS rn FROM bt) x WHERE rn <= 2", i, i)
	}
	gauge := func(name string, labels ...string) float64 {
		t.Helper()
		f, ok := srv.Metrics(t)[name]
		if !ok {
			t.Fatalf("/metrics has no %s", name)
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				if m.GetGauge() != nil {
					return m.GetGauge().GetValue()
				}
			}
		}
		t.Fatalf("/metrics has no %s with labels %v", name, labels)
		return 0
	}
	// within waits until every listed view holds at most the share of
	// the budget a top-N cache that wants more gets now, and returns
	// that share and the caches sharing the budget.
	within := func(views []int) (limit, caches float64) {
		t.Helper()
		flush(t, conn)
		testutil.Poll(t, 30*time.Second, "top-N caches within their share of the budget", func() error {
			caches = gauge("streamdb_state_caches")
			limit = gauge("streamdb_state_cache_limit_entries", "kind", "topn_rows")
			for _, i := range views {
				if held := stateRowsHeld(t, srv, "streamdb_topn_state_rows", fmt.Sprintf("bt_top%d", i)); held > limit || held == 0 {
					return fmt.Errorf("bt_top%d holds %v rows in memory, limit %v", i, held, limit)
				}
			}
			return nil
		})
		return limit, caches
	}
	// A quarter of the budget is Pebble's block cache; the rest is
	// shared by the caches.
	const shared = budget - budget/4
	exec(t, conn, view(0))
	one, caches := within([]int{0})
	if one >= 3000 {
		t.Fatalf("with one view the top-N may keep %v rows: the budget does not bound it below its 3,000", one)
	}
	// The view's own rows (1,000) take less than half the budget: the
	// top-N gets what they leave, more than an equal share.
	if equal := shared / caches / 256; one <= equal {
		t.Errorf("the top-N may keep %v rows, no more than an equal share of the budget (%v): the view's small cache did not leave it the rest", one, equal)
	}
	for i := 1; i <= 3; i++ {
		exec(t, conn, view(i))
	}
	four, _ := within([]int{0, 1, 2, 3})
	if four >= one {
		t.Errorf("four views may each keep %v rows, one view %v: the share did not shrink", four, one)
	}
	// Updates bring rows into memory; the caches stay within their share.
	exec(t, conn, "UPDATE bt SET v = v + 1 WHERE id % 3 = 0")
	within([]int{0, 1, 2, 3})
	for i := 1; i <= 3; i++ {
		exec(t, conn, fmt.Sprintf("DROP MATERIALIZED VIEW bt_top%d", i))
	}
	if again, _ := within([]int{0}); again <= four {
		t.Errorf("after the drops the top-N may keep %v rows, as few as with four views (%v)", again, four)
	}
	wantRows(t, conn, "SELECT count(*) FROM bt_top0", "1000")

	// The block cache follows the budget as it changes.
	blockLimit := func(want float64) {
		t.Helper()
		testutil.Poll(t, 10*time.Second, "the block cache's limit follows the budget", func() error {
			if got := gauge("streamdb_pebble_block_cache_limit_bytes"); got != want {
				return fmt.Errorf("streamdb_pebble_block_cache_limit_bytes = %v, want %v", got, want)
			}
			return nil
		})
	}
	blockLimit(budget / 4)
	exec(t, conn, "ALTER SYSTEM SET state.memory.budget = 40000000")
	blockLimit(10_000_000)
	exec(t, conn, "ALTER SYSTEM SET state.memory.budget = 0")
	blockLimit(64 << 20)
}
