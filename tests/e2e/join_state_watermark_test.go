package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestJoinStateFreedByWatermark runs a window join (TUMBLE on both sides,
// joined on window_start) and an interval join (a.ts BETWEEN b.ts - 10s
// AND b.ts) over two watermarked streams, compares both with PostgreSQL
// (date_bin for the windows) round by round, and checks that the rows the
// joins hold (streamdb_join_state_rows) fall once the watermarks pass
// them, also after a kill -9; EXPLAIN shows the state cleaning.
func TestJoinStateFreedByWatermark(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_JOIN_SEED")
	rng := rand.New(rand.NewPCG(seed, 19))
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, pg, "CREATE TABLE sa (k INT, ts TIMESTAMP, x INT)", "CREATE TABLE sb (k INT, ts TIMESTAMP, y INT)")
	exec(t, conn,
		"CREATE STREAM sa (k INT, ts TIMESTAMP, x INT, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)",
		"CREATE STREAM sb (k INT, ts TIMESTAMP, y INT, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)")
	const window = `SELECT a.k, a.window_start, a.x, b.y
		FROM TUMBLE(sa, ts, INTERVAL '10' SECOND) a JOIN TUMBLE(sb, ts, INTERVAL '10' SECOND) b
		ON a.k = b.k AND a.window_start = b.window_start`
	const interval = `SELECT a.k, a.x, b.y FROM sa a JOIN sb b
		ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '10' SECOND AND b.ts`
	const top = `SELECT window_start, k, x, rn FROM (
		SELECT window_start, k, x, row_number() OVER (PARTITION BY window_start ORDER BY x DESC) AS rn
		FROM TUMBLE(sa, ts, INTERVAL '10' SECOND)) t WHERE rn <= 2`
	views := []struct{ name, query, pgQuery string }{
		{"wj", window, `SELECT a.k, date_bin('10 seconds', a.ts, '2000-01-01') AS window_start, a.x, b.y FROM sa a JOIN sb b
			ON a.k = b.k AND date_bin('10 seconds', a.ts, '2000-01-01') = date_bin('10 seconds', b.ts, '2000-01-01')`},
		{"ij", interval, interval},
		// A top-N per window frees the windows the watermark closed.
		{"tn", top, `SELECT window_start, k, x, rn FROM (
			SELECT date_bin('10 seconds', ts, '2000-01-01') AS window_start, k, x,
			row_number() OVER (PARTITION BY date_bin('10 seconds', ts, '2000-01-01') ORDER BY x DESC) AS rn FROM sa) t WHERE rn <= 2`},
	}
	joins := views[:2]
	for _, v := range views {
		plan := strings.Join(textRows(t, conn, "EXPLAIN CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query), "\n")
		want := []string{"state cleaning: left rows when watermark(sb)", "right rows when watermark(sa)"}
		if v.name == "tn" {
			want = []string{"state cleaning: partitions when watermark(sa) >= window_start + 10s"}
		}
		for _, w := range want {
			if !strings.Contains(plan, w) {
				t.Errorf("EXPLAIN of %s does not show %q:\n%s", v.name, w, plan)
			}
		}
		exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v.name, v.query))
	}

	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	x := 0
	// Round r's events fall in [5r, 5r+2) seconds: none is late under a
	// watermark 2 seconds behind the newest event.
	round := func(r, n int) {
		t.Helper()
		var stmts []string
		for range n {
			x++
			ts := start.Add(time.Duration(r)*5*time.Second + time.Duration(rng.IntN(2000))*time.Millisecond)
			s := []string{"sa", "sb"}[rng.IntN(2)]
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES (%d, TIMESTAMP '%s', %d)", s, rng.IntN(4), ts.Format("2006-01-02 15:04:05.000"), x))
		}
		exec(t, conn, stmts...)
		exec(t, pg, stmts...)
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		for _, v := range views {
			if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.pgQuery); diff != "" {
				t.Fatalf("seed %d, %s: view %s has %s", seed, when, v.name, diff)
			}
		}
	}
	var peak [2]float64
	for r := range 8 {
		round(r, 30)
		compare(fmt.Sprintf("round %d", r))
		for i, v := range joins {
			peak[i] = max(peak[i], joinRowsHeld(t, srv, v.name))
		}
	}
	// 8 rounds of 30 rows: a join that frees nothing holds all 240.
	for i, v := range joins {
		if peak[i] >= 200 {
			t.Errorf("%s held up to %v rows of 240: the watermarks freed few or none", v.name, peak[i])
		}
	}

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after kill -9")
	// One row on each side a minute later moves both watermarks past every
	// window and interval so far: each join holds only those two rows.
	late := start.Add(time.Minute).Format("2006-01-02 15:04:05")
	stmts := []string{fmt.Sprintf("INSERT INTO sa VALUES (9, TIMESTAMP '%s', 0)", late), fmt.Sprintf("INSERT INTO sb VALUES (9, TIMESTAMP '%s', 0)", late)}
	exec(t, conn, stmts...)
	exec(t, pg, stmts...)
	compare("after the watermarks passed everything")
	for _, v := range joins {
		if held := joinRowsHeld(t, srv, v.name); held > 2 {
			t.Errorf("%s holds %v rows after both watermarks passed all but the newest 2", v.name, held)
		}
	}
	srv.Restart(t)
	conn = srv.Conn(t)
	flush(t, conn)
	for _, v := range joins {
		if held := joinRowsHeld(t, srv, v.name); held > 2 {
			t.Errorf("%s holds %v rows after a restart: freed rows came back from Pebble", v.name, held)
		}
	}
	round(13, 20)
	compare("after a restart and a round")
}
