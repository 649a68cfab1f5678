package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const joinStateBench = "join state"

// joinStateEvents is the events per stream of the two-stream join at 1x
// state (4x publishes four times as many); BENCH_JOIN_EVENTS overrides.
func joinStateEvents(b *testing.B) int {
	n := 100_000
	if report.Mode == "full" {
		n = 300_000
	}
	if v := os.Getenv("BENCH_JOIN_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("BENCH_JOIN_EVENTS=%q: want a positive integer", v)
		}
	}
	return n
}

// BenchmarkJoinState measures issue 18's memory figures. The two-stream
// join: a join of two streams on a key with no time bound, then GROUP BY,
// over N and 4N events per stream (every key once on each side, in two
// different orders, so the state holds about N rows per side before they
// match), each on a fresh server under a memory budget smaller than the
// 1x state (stateBudget); it reports each run's peak RSS and the ratio
// 4x/1x (target < 1.6), growth past the budget. The window
// join: a TUMBLE join of two watermarked streams over events whose time
// advances, reporting RSS after the first quarter and after all of them.
func BenchmarkJoinState(b *testing.B) {
	n := joinStateEvents(b)
	budget := stateBudget(b, n)
	report.Configf("join state: a join of two streams on a key, then GROUP BY, over %d and %d events per stream (fresh server each, published while paused; state.memory.budget %d bytes (%.1f MiB), below the 1x state); a 1-second TUMBLE join of two watermarked streams over %d events per stream",
		n, 4*n, budget, float64(budget)/(1<<20), 4*n)
	var peaks [2]float64
	for i, scale := range []int{1, 4} {
		b.Run(fmt.Sprintf("join/%dx", scale), func(b *testing.B) {
			peaks[i] = benchKeyJoin(b, scale, n*scale, budget)
		})
	}
	if peaks[0] > 0 && peaks[1] > 0 {
		report.Add(joinStateBench, "two-stream join", "peak RSS at 4x / at 1x (target < 1.6)", peaks[1]/peaks[0], "ratio")
	}
	b.Run("window join", func(b *testing.B) { benchWindowJoin(b, 4*n) })
}

// benchKeyJoin runs the two-stream join over m events per stream and
// returns the server's peak RSS; budget is state.memory.budget.
func benchKeyJoin(b *testing.B, scale, m int, budget int64) float64 {
	cas := fmt.Sprintf("two-stream join, %dx (%d events per stream)", scale, m)
	s := startServer(b, "", stateSettings(budget))
	defer s.Kill(b)
	defer watchHeap(b, s)()
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ja (k BIGINT, v BIGINT) WITH (subject = 'bench.ja')")
	execTimed(b, conn, "CREATE STREAM jb (k BIGINT, v BIGINT) WITH (subject = 'bench.jb')")
	execTimed(b, conn, `CREATE MATERIALIZED VIEW jv AS
		SELECT a.v % 100 AS g, count(*) AS n FROM ja a JOIN jb b ON a.k = b.k GROUP BY a.v % 100`)
	execTimed(b, conn, "ALTER SYSTEM PAUSE")
	mm := int64(m)
	sz := currentSizes(b)
	publishAll(b, s.NATSURL(), "bench.ja", m, sz.publishers, func(i int) []byte { return event(int64(i)*permPrime%mm, int64(i)) })
	publishAll(b, s.NATSURL(), "bench.jb", m, sz.publishers, func(i int) []byte { return event(int64(m-1-i)*permPrime%mm, int64(i)) })
	execTimed(b, conn, "ALTER SYSTEM RESUME")
	start := time.Now()
	waitCount(b, conn, "SELECT sum(n) FROM jv", int64(m))
	d := time.Since(start)
	_, peak := rssMB(s.PID())
	report.Add(joinStateBench, cas, "time until every pair joined", d.Seconds(), "s")
	report.Add(joinStateBench, cas, "rate", float64(2*m)/d.Seconds(), "events/s")
	report.Add(joinStateBench, cas, "server peak RSS", peak, "MiB")
	report.Add(joinStateBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	return peak
}

// benchWindowJoin runs a TUMBLE join of two watermarked streams over m
// events per stream whose event time advances 1 ms per event, and reports
// RSS once the first quarter is joined and once all are: with state freed
// by watermark the two stay close.
func benchWindowJoin(b *testing.B, m int) {
	const cas = "window join"
	s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "0"})
	defer s.Kill(b)
	conn := s.Conn(b)
	createWindowJoin(b, conn, "wa", "wb", "wj")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	// Event i of each stream: key i % 1000 at base + i ms, so each
	// 1-second window holds each key once per side.
	gen := func(off int) func(i int) []byte {
		return func(i int) []byte {
			i += off
			return fmt.Appendf(nil, `{"k":%d,"v":%d,"ts":%d}`, i%1000, i, base+int64(i))
		}
	}
	var rss [2]float64
	done := 0
	for phase, upto := range []int{m / 4, m} {
		publishBoth(b, s.NATSURL(), done, upto, gen(0))
		done = upto
		// Event i of one stream joins event i of the other only.
		waitCount(b, conn, "SELECT sum(n) FROM wj", int64(upto))
		rss[phase], _ = rssMB(s.PID())
	}
	report.Add(joinStateBench, cas, fmt.Sprintf("server RSS after %d events per stream", m/4), rss[0], "MiB")
	report.Add(joinStateBench, cas, fmt.Sprintf("server RSS after %d events per stream", m), rss[1], "MiB")
	report.Add(joinStateBench, cas, "RSS at the end / after the first quarter", rss[1]/rss[0], "ratio")
	_, peak := rssMB(s.PID())
	report.Add(joinStateBench, cas, "server peak RSS", peak, "MiB")
}

// createWindowJoin creates streams left and right (k, v, ts with a
// 1-second watermark delay, on subjects bench.<name>) and view, which
// counts per 1-second TUMBLE window the rows of the two that share a key
// and a window.
func createWindowJoin(b *testing.B, conn *pgx.Conn, left, right, view string) {
	for _, st := range []string{left, right} {
		execTimed(b, conn, fmt.Sprintf("CREATE STREAM %s (k BIGINT, v BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (subject = 'bench.%s')", st, st))
	}
	execTimed(b, conn, fmt.Sprintf(`CREATE MATERIALIZED VIEW %s AS
		SELECT a.window_start, count(*) AS n
		FROM TUMBLE(%s, ts, INTERVAL '1' SECOND) a JOIN TUMBLE(%s, ts, INTERVAL '1' SECOND) b
		ON a.k = b.k AND a.window_start = b.window_start GROUP BY a.window_start`, view, left, right))
}

// publishBoth publishes events from..upto-1 of gen to both streams of
// the window join, interleaved and in order on one connection, as two
// streams fed at the same rate: none is late, and neither stream runs
// ahead of the other by more than the readers' own drift (a stream far
// ahead holds the other side's rows until its watermark catches up).
func publishBoth(b *testing.B, url string, from, upto int, gen func(i int) []byte) {
	b.Helper()
	p, err := newPublisher(url)
	if err != nil {
		b.Fatal(err)
	}
	defer p.close()
	for i := from; i < upto; i++ {
		for _, subject := range []string{"bench.wa", "bench.wb"} {
			if err := p.publish(subject, gen(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := p.wait(5 * time.Minute); err != nil {
		b.Fatal(err)
	}
}

// waitCount runs FLUSH, then polls q until it returns want (a sum that
// only grows).
func waitCount(b *testing.B, conn *pgx.Conn, q string, want int64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// FLUSH blocks until the views have consumed what is published, at no
	// cost to the pipelines. Polling q alone would scan the whole view
	// every few milliseconds and take a core away from the work measured.
	if _, err := conn.Exec(ctx, "FLUSH"); err != nil {
		b.Fatalf("FLUSH: %v", err)
	}
	for {
		began := time.Now()
		var n *int64
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		if n != nil && *n == want {
			return
		}
		if n != nil && *n > want {
			b.Fatalf("%s = %d, want %d", q, *n, want)
		}
		// Wait at least four times as long as the query took, so the
		// polls cost at most a fifth of one core.
		select {
		case <-ctx.Done():
			b.Fatalf("%s did not reach %d in time", q, want)
		case <-time.After(max(20*time.Millisecond, 4*time.Since(began))):
		}
	}
}
