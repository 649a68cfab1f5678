package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestAlterViewFilterOnTop: a GROUP BY view over a stream whose JetStream
// history is then purged is altered to add HAVING; the aggregate keeps its
// totals (nothing is recounted or lost) and counts new events on, as
// PostgreSQL computes the new query over every event sent; a view reading
// the altered one follows the change.
func TestAlterViewFilterOnTop(t *testing.T) {
	p := startAlterPair(t, "alter.ev")
	conn := p.sdb
	const all = `SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k`
	p.view(t, "totals", all)
	p.view(t, "big", `SELECT count(*) AS groups, sum(c) AS c, sum(s) AS s FROM totals`)
	check := func() {
		t.Helper()
		p.same(t, `SELECT k, c, s FROM totals`, `SELECT groups, c, s FROM big`)
	}
	p.send(t, 500)
	check()

	// JetStream discards the history.
	p.purge(t)

	// A changed aggregate (a filter below it) needs the history: refused, naming the operator.
	pe := wantExecCode(t, conn, `ALTER MATERIALIZED VIEW totals AS SELECT k, count(*) AS c, sum(n) AS s FROM ev WHERE n >= 0 GROUP BY k`, "55000")
	if !strings.Contains(pe.Message, "aggregate-") {
		t.Fatalf("refusal names no operator: %s", pe.Message)
	}
	explain := strings.Join(textRows(t, conn, `EXPLAIN ALTER MATERIALIZED VIEW totals AS `+all+` HAVING count(*) > 100`), "\n")
	if !strings.Contains(explain, "kept") {
		t.Fatalf("EXPLAIN ALTER does not keep the aggregate:\n%s", explain)
	}
	p.alter(t, "totals", "", all+` HAVING count(*) > 100`)
	check()       // k0..k4 have 100 each: none left
	p.send(t, 12) // k0, k1 get 3 more, k2..k4 2 more
	check()

	// A filter that leaves out groups: the reader sees them retracted.
	p.alter(t, "totals", "", all+` HAVING k <> 'k0'`)
	check()
	p.send(t, 30)
	check()

	// allow_non_restored_state: the new aggregate starts empty.
	exec(t, conn, `ALTER MATERIALIZED VIEW totals WITH (allow_non_restored_state = true) AS SELECT k, count(*) AS c, sum(n) AS s FROM ev WHERE n >= 0 GROUP BY k`)
	p.send(t, 5)
	flush(t, conn)
	wantRows(t, conn, `SELECT count(*), sum(c) FROM totals`, "5 5")
	wantRows(t, conn, `SELECT groups, c FROM big`, "5 5")
}

// TestAlterViewNamedOperator: an aggregate named WITH (uids = ...) keeps
// its state through a rewrite of the query below and around it, after the
// history is purged; the same rewrite of an unnamed aggregate is refused.
func TestAlterViewNamedOperator(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, 2*time.Minute)
	exec(t, conn,
		`CREATE STREAM ev (k text, n bigint) WITH (subject = 'named.ev')`,
		`CREATE MATERIALIZED VIEW named WITH (uids = 'daily') AS WITH daily AS (SELECT k, count(*) AS c FROM ev GROUP BY k) SELECT k, c FROM daily`,
		`CREATE MATERIALIZED VIEW unnamed AS WITH daily AS (SELECT k, count(*) AS c FROM ev GROUP BY k) SELECT k, c FROM daily`)
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishMany(t, js, "named.ev", 300, func(i int) string { return fmt.Sprintf(`{"k": "k%d", "n": %d}`, i%3, i) })
	flush(t, conn)
	stream, err := js.StreamNameBySubject(ctx, "named.ev")
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	rewrite := ` AS WITH daily AS (SELECT k, count(*) AS c FROM (SELECT k, n FROM ev WHERE true) e GROUP BY k) SELECT k, c FROM daily WHERE c >= 0`
	wantExecCode(t, conn, `ALTER MATERIALIZED VIEW unnamed`+rewrite, "55000")
	exec(t, conn, `ALTER MATERIALIZED VIEW named WITH (uids = 'daily')`+rewrite)
	publishMany(t, js, "named.ev", 3, func(i int) string { return fmt.Sprintf(`{"k": "k%d", "n": 0}`, i) })
	flush(t, conn)
	wantRows(t, conn, `SELECT k, c FROM named ORDER BY k`, "k0 101", "k1 101", "k2 101")
}
