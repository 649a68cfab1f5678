package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestAlterViewFilterOnTop: a GROUP BY view over a stream whose JetStream
// history is then purged is altered to add HAVING; the aggregate keeps its
// totals (nothing is recounted or lost) and counts new events on; a view
// reading the altered one follows the change.
func TestAlterViewFilterOnTop(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testCtx(t, 2*time.Minute)
	exec(t, conn,
		`CREATE STREAM ev (k text, n bigint) WITH (subject = 'alter.ev')`,
		`CREATE MATERIALIZED VIEW totals AS SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k`,
		`CREATE MATERIALIZED VIEW big AS SELECT count(*) AS groups FROM totals`)
	_, js := jetStream(t, srv.NATSURL())
	want := map[string][2]int64{}
	send := func(from, to int) {
		publishMany(t, js, "alter.ev", to-from, func(i int) string {
			k := fmt.Sprintf("k%d", (from+i)%5)
			c := want[k]
			want[k] = [2]int64{c[0] + 1, c[1] + int64(from+i)}
			return fmt.Sprintf(`{"k": %q, "n": %d}`, k, from+i)
		})
	}
	send(0, 500)
	flush(t, conn)
	wantRows(t, conn, `SELECT groups FROM big`, "5")

	// JetStream discards the history.
	stream, err := js.StreamNameBySubject(ctx, "alter.ev")
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

	// A changed aggregate (a filter below it) needs the history: refused, naming the operator.
	pe := wantExecCode(t, conn, `ALTER MATERIALIZED VIEW totals AS SELECT k, count(*) AS c, sum(n) AS s FROM ev WHERE n >= 0 GROUP BY k`, "55000")
	if !strings.Contains(pe.Message, "aggregate-") {
		t.Fatalf("refusal names no operator: %s", pe.Message)
	}
	explain := strings.Join(textRows(t, conn, `EXPLAIN ALTER MATERIALIZED VIEW totals AS SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k HAVING count(*) > 100`), "\n")
	if !strings.Contains(explain, "kept") {
		t.Fatalf("EXPLAIN ALTER does not keep the aggregate:\n%s", explain)
	}
	exec(t, conn, `ALTER MATERIALIZED VIEW totals AS SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k HAVING count(*) > 100`)
	send(500, 520) // k0..k4 get 4 more each: 104 each
	flush(t, conn)
	var rows []string
	for k, c := range want {
		if c[0] > 100 {
			rows = append(rows, fmt.Sprintf("%s|%d|%d", k, c[0], c[1]))
		}
	}
	got := strings.Join(testutil.SortedRows(t, conn, `SELECT k, c, s FROM totals`), ";")
	if len(rows) != 5 || len(strings.Split(got, ";")) != 5 {
		t.Fatalf("totals after ALTER: %s, want %v", got, rows)
	}
	for _, r := range rows {
		if !strings.Contains(got, r) {
			t.Fatalf("totals after ALTER: %s, want %v", got, rows)
		}
	}
	wantRows(t, conn, `SELECT groups FROM big`, "5")

	// A filter that leaves out groups: the reader sees them retracted.
	exec(t, conn, `ALTER MATERIALIZED VIEW totals AS SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k HAVING k <> 'k0'`)
	wantRows(t, conn, `SELECT groups FROM big`, "4")

	// allow_non_restored_state: the new aggregate starts empty.
	exec(t, conn, `ALTER MATERIALIZED VIEW totals WITH (allow_non_restored_state = true) AS SELECT k, count(*) AS c, sum(n) AS s FROM ev WHERE n >= 0 GROUP BY k`)
	send(520, 525)
	flush(t, conn)
	wantRows(t, conn, `SELECT count(*), sum(c) FROM totals`, "5 5")
	_ = context.Background
}

// TestAlterViewNamedOperator: an aggregate named WITH (uids = ...) keeps
// its state through a rewrite of the query below and around it, after the
// history is purged; the same rewrite of an unnamed aggregate is refused.
func TestAlterViewNamedOperator(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testCtx(t, 2*time.Minute)
	exec(t, conn,
		`CREATE STREAM ev (k text, n bigint) WITH (subject = 'named.ev')`,
		`CREATE MATERIALIZED VIEW named WITH (uids = 'daily') AS WITH daily AS (SELECT k, count(*) AS c FROM ev GROUP BY k) SELECT k, c FROM daily`,
		`CREATE MATERIALIZED VIEW unnamed AS WITH daily AS (SELECT k, count(*) AS c FROM ev GROUP BY k) SELECT k, c FROM daily`)
	_, js := jetStream(t, srv.NATSURL())
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
