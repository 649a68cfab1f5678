package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestWindowAggregateJoinFreedByWatermark runs Nexmark q7's shape: bids
// joined with the highest bid of each 10-second TUMBLE window (GROUP BY
// window_end, renamed date_time) on price, and bounded by an interval on
// the renamed window_end. The aggregate's output retracts (each window's
// max changes while the window is open) but only in open windows, so the
// join may free bids once the watermark carried by window_end passes
// them. EXPLAIN shows the state cleaning; the view matches PostgreSQL
// round by round (no row is late) and after a kill -9; the bids the join
// holds (streamdb_join_state_rows) fall once the watermark passes them;
// a late bid is dropped once, by the reader both scans share.
func TestWindowAggregateJoinFreedByWatermark(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_JOIN_SEED")
	rng := rand.New(rand.NewPCG(seed, 7))
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, pg, "CREATE TABLE bid (auction INT, price INT, bidder INT, date_time TIMESTAMP)")
	exec(t, conn, "CREATE STREAM bid (auction INT, price INT, bidder INT, date_time TIMESTAMP, WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND)")
	const q7 = `SELECT B.auction, B.price, B.bidder, B.date_time FROM bid B
		JOIN (SELECT max(price) AS maxprice, window_end AS date_time
		      FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_end) B1
		ON B.price = B1.maxprice
		WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time`
	pgQ7 := strings.Replace(q7, "window_end AS date_time\n\t\t      FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_end",
		"date_bin('10 seconds', date_time, '2000-01-01') + INTERVAL '10' SECOND AS date_time FROM bid GROUP BY 2", 1)
	if pgQ7 == q7 {
		t.Fatal("the PostgreSQL form of q7 was not derived")
	}
	plan := strings.Join(textRows(t, conn, "EXPLAIN CREATE MATERIALIZED VIEW q7 AS "+q7), "\n")
	if w := "state cleaning: left rows when watermark(bid) > date_time + 10s"; !strings.Contains(plan, w) {
		t.Errorf("EXPLAIN of q7 does not show %q:\n%s", w, plan)
	}
	exec(t, conn, "CREATE MATERIALIZED VIEW q7 AS "+q7)

	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// Round r's bids fall in [4r, 4r+2) seconds: none is late under a
	// watermark 2 seconds behind the newest. Each round sends low prices,
	// then (in a later epoch) higher ones: the watermark moves past the
	// previous round's bids before their window's max changes, so a join
	// that freed them too early could not retract what they joined.
	round := func(r, n int) {
		t.Helper()
		for half := range 2 {
			var stmts []string
			for range n / 2 {
				ts := start.Add(time.Duration(r)*4*time.Second + time.Duration(rng.IntN(2000))*time.Millisecond)
				stmts = append(stmts, fmt.Sprintf("INSERT INTO bid VALUES (%d, %d, %d, TIMESTAMP '%s')",
					rng.IntN(5), 90+r+3*half+rng.IntN(3), rng.IntN(100), ts.Format("2006-01-02 15:04:05.000")))
			}
			exec(t, conn, stmts...)
			exec(t, pg, stmts...)
			flush(t, conn)
		}
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		if diff := testutil.RowsDiff(t, conn, "SELECT * FROM q7", pg, pgQ7); diff != "" {
			t.Fatalf("seed %d, %s: q7 has %s", seed, when, diff)
		}
	}
	const rounds, perRound = 10, 30
	var peak float64
	for r := range rounds {
		round(r, perRound)
		compare(fmt.Sprintf("round %d", r))
		peak = max(peak, joinRowsHeld(t, srv, "q7"))
	}
	// A join that frees nothing holds every bid, plus a row per window.
	if peak >= rounds*perRound*2/3 {
		t.Errorf("q7 held up to %v rows for %d bids: the watermark freed few or none", peak, rounds*perRound)
	}

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after kill -9")
	// A bid a minute later moves the watermark past every window so far:
	// the join keeps that bid and one row per window (the aggregate's side
	// retracts, so it is never freed).
	windows := rounds*4/10 + 1
	stmt := fmt.Sprintf("INSERT INTO bid VALUES (1, 1, 1, TIMESTAMP '%s')", start.Add(time.Minute).Format("2006-01-02 15:04:05"))
	exec(t, conn, stmt)
	exec(t, pg, stmt)
	compare("after the watermark passed every window")
	if held := joinRowsHeld(t, srv, "q7"); held > float64(windows+2) {
		t.Errorf("q7 holds %v rows after the watermark passed all bids but the newest (want at most %d)", held, windows+2)
	}
	round(16, 20)
	compare("after a round past the gap")

	// Both scans of bid share one reader, so one watermark: a late bid
	// (sent to streamdb only) is dropped once, before either branch sees
	// it, and the view stays PostgreSQL's.
	exec(t, conn, fmt.Sprintf("INSERT INTO bid VALUES (1, 1000, 1, TIMESTAMP '%s')", start.Add(5*time.Second).Format("2006-01-02 15:04:05")))
	compare("after a late bid")
	wantRows(t, conn, "SELECT stream, late_rows FROM streamdb_watermarks WHERE view = 'q7'", "bid 1")
}

// TestSharedHopAggregatesOverWatermark runs Nexmark q5's shape over a
// watermarked stream: the same HOP count per auction twice (grouped in two
// orders, so computed once as a shared subplan over the one reader), the
// max per window joined back. The aggregates free closed windows; the view
// matches PostgreSQL (generate_series for the hopping windows) round by
// round while the watermark closes them.
func TestSharedHopAggregatesOverWatermark(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_JOIN_SEED")
	rng := rand.New(rand.NewPCG(seed, 5))
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, pg, "CREATE TABLE bid (auction INT, date_time TIMESTAMP)")
	exec(t, conn, "CREATE STREAM bid (auction INT, date_time TIMESTAMP, WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)")
	const q5 = `SELECT AuctionBids.auction, AuctionBids.num, AuctionBids.starttime FROM (
		SELECT auction, count(*) AS num, window_start AS starttime
		FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '6' SECOND) GROUP BY window_start, auction) AS AuctionBids
		JOIN (
		SELECT max(CountBids.num) AS maxn, CountBids.starttime_c FROM (
		  SELECT count(*) AS num, window_start AS starttime_c
		  FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '6' SECOND) GROUP BY auction, window_start) AS CountBids
		GROUP BY CountBids.starttime_c) AS MaxBids
		ON AuctionBids.starttime = MaxBids.starttime_c AND AuctionBids.num >= MaxBids.maxn`
	// A bid at t is in the windows starting at the 2-second marks in
	// (t - 6s, t].
	const counts = `SELECT auction, count(*) AS num, ws FROM (
		SELECT b.auction, w.ws FROM bid b, generate_series(date_bin('2 seconds', b.date_time, '2000-01-01') - INTERVAL '4 seconds',
		  date_bin('2 seconds', b.date_time, '2000-01-01'), INTERVAL '2 seconds') AS w(ws)) x GROUP BY auction, ws`
	pgQ5 := `SELECT a.auction, a.num, a.ws FROM (` + counts + `) a
		JOIN (SELECT max(num) AS maxn, ws FROM (` + counts + `) c GROUP BY ws) m ON a.ws = m.ws AND a.num >= m.maxn`
	plan := strings.Join(textRows(t, conn, "EXPLAIN CREATE MATERIALIZED VIEW q5 AS "+q5), "\n")
	for _, w := range []string{"is computed once for 2 uses", "state cleaning: groups when watermark(bid) >= window_start + 6s"} {
		if !strings.Contains(plan, w) {
			t.Errorf("EXPLAIN of q5 does not show %q:\n%s", w, plan)
		}
	}
	exec(t, conn, "CREATE MATERIALIZED VIEW q5 AS "+q5)

	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range 8 {
		// Round r's bids fall in [3r, 3r+1) seconds: none is late.
		var stmts []string
		for range 25 {
			ts := start.Add(time.Duration(r)*3*time.Second + time.Duration(rng.IntN(1000))*time.Millisecond)
			stmts = append(stmts, fmt.Sprintf("INSERT INTO bid VALUES (%d, TIMESTAMP '%s')", rng.IntN(4), ts.Format("2006-01-02 15:04:05.000")))
		}
		exec(t, conn, stmts...)
		exec(t, pg, stmts...)
		flush(t, conn)
		if diff := testutil.RowsDiff(t, conn, "SELECT * FROM q5", pg, pgQ5); diff != "" {
			t.Fatalf("seed %d, round %d: q5 has %s", seed, r, diff)
		}
	}
	wantRows(t, conn, "SELECT stream, late_rows FROM streamdb_watermarks WHERE view = 'q5'", "bid 0")
}
