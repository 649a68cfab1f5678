package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestReplaceViewOverTable: CREATE OR REPLACE and ALTER of materialized
// views that read a table (a projection, an aggregate whose function
// changes) and of one that reads another view hold what a fresh view of
// the new query holds: the rows they read through edges are sent again.
// Views reading a replaced view see its old rows retracted and the new
// ones inserted. PostgreSQL's views of the same queries, replaced alike,
// give the expected rows after every change and every DML.
func TestReplaceViewOverTable(t *testing.T) {
	sdb, ref, _ := startWithPostgres(t)
	execBoth(t, sdb, ref, `CREATE TABLE t (a int, b int)`, `INSERT INTO t VALUES (1, 2), (5, 3)`)
	views := []struct{ name, query string }{
		{"mv", `SELECT a + b FROM t`},
		{"mv_total", `SELECT count(*) AS n, sum("?column?") AS s FROM mv`},
		{"hi", `SELECT "?column?" AS v FROM mv WHERE "?column?" > 5`},
		{"agg", `SELECT a, count(*) AS c FROM t GROUP BY a`},
	}
	for _, v := range views {
		exec(t, sdb, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v.name, v.query))
		exec(t, ref, fmt.Sprintf("CREATE VIEW %s AS %s", v.name, v.query))
	}
	// replace changes a view in streamdb (stmt: CREATE OR REPLACE
	// MATERIALIZED VIEW or ALTER MATERIALIZED VIEW) and in PostgreSQL.
	replace := func(stmt, name, query string) {
		t.Helper()
		exec(t, sdb, fmt.Sprintf("%s %s AS %s", stmt, name, query))
		exec(t, ref, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS %s", name, query))
	}
	queries := []string{`SELECT * FROM mv`, `SELECT n, s FROM mv_total`, `SELECT v FROM hi`, `SELECT a, c FROM agg`}
	check := func(step string) {
		t.Helper()
		t.Logf("%s", step)
		// Reads see the replaced view's first epoch without FLUSH.
		sameRowsAsPostgres(t, sdb, ref, queries...)
		flush(t, sdb)
		sameRowsAsPostgres(t, sdb, ref, queries...)
	}
	check("created")

	replace("CREATE OR REPLACE MATERIALIZED VIEW", "mv", `SELECT 100 / a FROM t`)
	check("mv replaced")
	execBoth(t, sdb, ref, `INSERT INTO t VALUES (10, 1), (20, 7)`, `UPDATE t SET a = 4 WHERE a = 5`, `DELETE FROM t WHERE a = 1`)
	check("DML after the replace")

	replace("ALTER MATERIALIZED VIEW", "agg", `SELECT a, sum(b) AS c FROM t GROUP BY a`)
	check("agg altered")
	replace("ALTER MATERIALIZED VIEW", "hi", `SELECT "?column?" AS v FROM mv WHERE "?column?" > 15`)
	check("hi altered")
	execBoth(t, sdb, ref, `INSERT INTO t VALUES (2, 2), (50, 0)`, `DELETE FROM t WHERE a = 20`)
	check("DML after the ALTERs")

	replace("ALTER MATERIALIZED VIEW", "mv", `SELECT a + b FROM t`)
	check("mv altered back")
	execBoth(t, sdb, ref, `INSERT INTO t VALUES (7, 7)`)
	check("DML at the end")
}

// TestAlterViewProjectionOverStream: a projection of a stream keeps no
// state, so an ALTER of it reads the stream again from its start while
// JetStream holds it (also through CREATE OR REPLACE), as a fresh view
// would; a view reading it follows. Once JetStream discarded the history
// such an ALTER is refused (55000, naming the rows and the stream), and
// allow_non_restored_state starts the rows empty.
func TestAlterViewProjectionOverStream(t *testing.T) {
	p := startAlterPair(t, "alterproj.ev")
	p.view(t, "proj", `SELECT k, n FROM ev WHERE n % 2 = 0`)
	p.view(t, "per_k", `SELECT k, count(*) AS c, sum(n) AS s FROM proj GROUP BY k`)
	check := func() {
		t.Helper()
		p.same(t, `SELECT k, n FROM proj`, `SELECT k, c, s FROM per_k`)
	}
	p.send(t, 300)
	check()

	explain := strings.Join(textRows(t, p.sdb, `EXPLAIN ALTER MATERIALIZED VIEW proj AS SELECT k, n * 10 AS n FROM ev WHERE n % 3 = 0`), "\n")
	if !strings.Contains(explain, "backfilled") {
		t.Fatalf("EXPLAIN ALTER does not backfill the projection:\n%s", explain)
	}
	p.alter(t, "proj", "", `SELECT k, n * 10 AS n FROM ev WHERE n % 3 = 0`)
	check()
	p.send(t, 50)
	check()

	exec(t, p.sdb, `CREATE OR REPLACE MATERIALIZED VIEW proj AS SELECT k, n + 1 AS n FROM ev`)
	exec(t, p.ref, `CREATE OR REPLACE VIEW proj AS SELECT k, n + 1 AS n FROM ev`)
	check()

	p.purge(t)
	pe := wantExecCode(t, p.sdb, `ALTER MATERIALIZED VIEW proj AS SELECT k, n FROM ev`, "55000")
	if !strings.Contains(pe.Message, "rows from ev") || !strings.Contains(pe.Message, "no longer holds") {
		t.Fatalf("refusal does not say which rows need which history: %s", pe.Message)
	}
	check() // unchanged
	exec(t, p.sdb, `ALTER MATERIALIZED VIEW proj WITH (allow_non_restored_state = true) AS SELECT k, n FROM ev`)
	p.send(t, 5) // events 350..354, keys k0..k4
	flush(t, p.sdb)
	wantRows(t, p.sdb, `SELECT k, n FROM proj ORDER BY k`, "k0 350", "k1 351", "k2 352", "k3 353", "k4 354")
	wantRows(t, p.sdb, `SELECT count(*), sum(c), sum(s) FROM per_k`, "5 5 1760")
}

// TestAlterViewOverTableWhileBarriersRun: an ALTER stops every dataflow
// and starts them again together (the table first, then the views in
// creation order) while the runtime goes on injecting barriers, here
// every millisecond. The altered view, created last, is rebuilt after
// the table and ten other views; were the epochs injected meanwhile to
// enrol the pipelines already rebuilt, the table would pass such an
// epoch's barrier on to the altered view, which would take it as its
// first epoch's, one the runtime never waits for from it: its batch,
// the table's rows it rereads, would be dropped and the view stay empty.
// Each ALTER's rows are PostgreSQL's, with no FLUSH in between.
func TestAlterViewOverTableWhileBarriersRun(t *testing.T) {
	sdb, ref, _ := startWithPostgres(t)
	execBoth(t, sdb, ref, `CREATE TABLE t (a int, b int)`, `INSERT INTO t VALUES (1, 2), (5, 3), (7, 7), (9, 0)`)
	for i := range 10 {
		exec(t, sdb, fmt.Sprintf("CREATE MATERIALIZED VIEW other%d AS SELECT a + %d AS v FROM t", i, i))
	}
	exec(t, sdb, `CREATE MATERIALIZED VIEW mv AS SELECT a * 1 AS v, b FROM t`)
	exec(t, ref, `CREATE VIEW mv AS SELECT a * 1 AS v, b FROM t`)
	exec(t, sdb, "SET execution.barrier.interval = '1ms'")
	for i := 2; i <= 21; i++ {
		q := fmt.Sprintf("SELECT a * %d AS v, b FROM t", i)
		exec(t, sdb, "ALTER MATERIALIZED VIEW mv AS "+q)
		exec(t, ref, "CREATE OR REPLACE VIEW mv AS "+q)
		sameRowsAsPostgres(t, sdb, ref, `SELECT v, b FROM mv`)
		if t.Failed() {
			t.Fatalf("after ALTER %d of mv", i-1)
		}
	}
}
