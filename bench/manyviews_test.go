package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

const manyViewsBench = "many views"

// manyViewsSQL are eight different GROUP BY views over stream ev; the
// first is also the single view they are compared with.
var manyViewsSQL = []string{
	"CREATE MATERIALIZED VIEW m1 AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k",
	"CREATE MATERIALIZED VIEW m2 AS SELECT k % 10 AS g, count(*) AS n, sum(v) AS total FROM ev GROUP BY k % 10",
	"CREATE MATERIALIZED VIEW m3 AS SELECT v, count(*) AS n FROM ev GROUP BY v",
	"CREATE MATERIALIZED VIEW m4 AS SELECT k % 1000 AS g, count(*) AS n, max(v) AS top FROM ev GROUP BY k % 1000",
	"CREATE MATERIALIZED VIEW m5 AS SELECT v % 7 AS g, count(*) AS n, min(k) AS low FROM ev GROUP BY v % 7",
	"CREATE MATERIALIZED VIEW m6 AS SELECT k % 100 AS g, count(*) AS n, avg(v) AS mean FROM ev GROUP BY k % 100",
	"CREATE MATERIALIZED VIEW m7 AS SELECT v % 10 AS g, count(*) AS n, sum(k) AS keys FROM ev GROUP BY v % 10",
	"CREATE MATERIALIZED VIEW m8 AS SELECT count(*) AS n, sum(v) AS total FROM ev",
}

// BenchmarkManyViews measures issue 17's fan-out figure: the events/s of
// one GROUP BY view over a stream, and of eight different GROUP BY views
// over it (which share one JetStream reader and decoder), side by side in
// one run, in the order one, eight, eight, one so that drift on a busy
// machine falls on both alike. Each run is a fresh server: views are
// created on the empty stream, ALTER SYSTEM PAUSE, the backlog is
// published, ALTER SYSTEM RESUME, and the rate is events / (time from
// RESUME until every view counts every event).
func BenchmarkManyViews(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("many views: %d events over %d keys published while paused; one view (%s) vs eight different GROUP BY views over the same stream; runs in the order one, eight, eight, one, each a fresh server",
		sz.backlog, sz.backlogKeys, manyViewsSQL[0][len("CREATE MATERIALIZED VIEW m1 AS "):])
	rates := map[int][]float64{}
	for i, views := range []int{1, 8, 8, 1} {
		b.Run(fmt.Sprintf("run=%d/views=%d", i+1, views), func(b *testing.B) {
			rates[views] = append(rates[views], benchManyViews(b, i+1, views, sz))
		})
	}
	one, eight := Summarize(rates[1]), Summarize(rates[8])
	if one.N > 0 {
		report.Add(manyViewsBench, "one view", fmt.Sprintf("rate, mean of %d runs", one.N), one.Mean, "events/s")
	}
	if eight.N > 0 {
		report.Add(manyViewsBench, "eight views", fmt.Sprintf("rate, mean of %d runs", eight.N), eight.Mean, "events/s")
	}
	if one.N > 0 && eight.N > 0 {
		report.Add(manyViewsBench, "eight vs one", "mean rate of eight views / of one view (target >= 0.5)", eight.Mean/one.Mean, "ratio")
	}
}

func benchManyViews(b *testing.B, run, views int, sz sizes) float64 {
	cas := fmt.Sprintf("run %d: %d view(s)", run, views)
	const subject = "bench.manyviews"
	s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "0"})
	defer s.Kill(b)
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = '"+subject+"')")
	for _, q := range manyViewsSQL[:views] {
		execTimed(b, conn, q)
	}
	execTimed(b, conn, "ALTER SYSTEM PAUSE")
	m, keys := sz.backlog, sz.backlogKeys
	publishAll(b, s.NATSURL(), subject, m, sz.publishers, func(i int) []byte {
		return event(int64(i%keys)*permPrime%int64(keys), int64(i%100))
	})
	execTimed(b, conn, "ALTER SYSTEM RESUME")
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// Every view counts: the sum of each one's n is the event count.
	for v := 1; v <= views; v++ {
		q := fmt.Sprintf("SELECT sum(n) FROM m%d", v)
		for {
			var n *int64
			if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
			if n != nil && *n == int64(m) {
				break
			}
			if n != nil && *n > int64(m) {
				b.Fatalf("%s = %d, only %d events were published", q, *n, m)
			}
			select {
			case <-ctx.Done():
				b.Fatalf("m%d did not count the %d events in time", v, m)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	d := time.Since(start)
	rate := float64(m) / d.Seconds()
	report.Add(manyViewsBench, cas, "time until every view counts every event", d.Seconds(), "s")
	report.Add(manyViewsBench, cas, "rate", rate, "events/s")
	_, peak := rssMB(s.PID())
	report.Add(manyViewsBench, cas, "server peak RSS", peak, "MiB")
	report.Add(manyViewsBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	b.ReportMetric(rate, "events/s")
	return rate
}
