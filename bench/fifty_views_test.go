package bench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

const fiftyViewsBench = "fifty views"

// fiftyViewsSettings returns the steady rate (events/s) and how long it
// runs: BENCH_FIFTY_RATE (default 50,000) and BENCH_FIFTY_SECONDS
// (default 30).
func fiftyViewsSettings(b *testing.B) (rate int, d time.Duration) {
	rate, secs := 50_000, 30
	for _, o := range []struct {
		env string
		dst *int
	}{{"BENCH_FIFTY_RATE", &rate}, {"BENCH_FIFTY_SECONDS", &secs}} {
		if v := os.Getenv(o.env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				b.Fatalf("%s=%q: want a positive integer", o.env, v)
			}
			*o.dst = n
		}
	}
	return rate, time.Duration(secs) * time.Second
}

// BenchmarkFiftyViews is issue 17's steady-state figure: 50 different
// GROUP BY views over one stream while events arrive at a steady rate,
// against one view at the same rate. Freshness is the time from
// publishing a marker event to a SELECT seeing it in a probe view over the
// same stream; one epoch commits every view at once, so the probe's
// freshness is every view's. The report gives p50/p99 freshness, whether
// the views kept up with the rate, and the server's peak RSS.
func BenchmarkFiftyViews(b *testing.B) {
	rate, d := fiftyViewsSettings(b)
	report.Configf("fifty views: %d events/s over 10,000 keys for %s; a probe view (max of marker events) beside 0 or 50 GROUP BY views over the same stream; runs in the order fifty, one, each a fresh server", rate, d)
	for _, views := range []int{50, 1} {
		b.Run(fmt.Sprintf("views=%d", views), func(b *testing.B) { fiftyViewsRun(b, views, rate, d) })
	}
}

func fiftyViewsRun(b *testing.B, views, rate int, d time.Duration) {
	cas := fmt.Sprintf("%d view(s) at %d events/s", views, rate)
	s := startServer(b, "", nil)
	defer stopServer(b, s)
	conn := s.Conn(b)
	const subject = "bench.fifty"
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = '"+subject+"')")
	execTimed(b, conn, "CREATE MATERIALIZED VIEW probe AS SELECT max(v) AS m FROM ev WHERE k = -1")
	for i := 0; i < views; i++ {
		// Different groupings and aggregates, so no two views are alike.
		m := i + 2
		execTimed(b, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW f%d AS SELECT k %% %d AS g, count(*) AS n, sum(v) AS s, max(k) AS top FROM ev GROUP BY k %% %d", i, m, m))
	}
	const keys = 10_000
	pr := startProducer(b, s.NATSURL(), subject, rate, keys)
	probe := startProber(b, s, subject, "SELECT m FROM probe")
	start := time.Now()
	time.Sleep(d) // the measured period: the producer and prober run meanwhile
	end := time.Now()
	samples := probe.stop(b)
	sent := pr.stop(b)
	// Measure freshness after a warm-up of a tenth of the period.
	lat := latencies(samples, start.Add(d/10), end)
	if len(lat) == 0 {
		b.Fatalf("%s: no freshness sample in the measured period", cas)
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	report.Add(fiftyViewsBench, cas, "events published", float64(sent), "events")
	report.Add(fiftyViewsBench, cas, "rate reached by the producer", float64(sent)/end.Sub(start).Seconds(), "events/s")
	report.Add(fiftyViewsBench, cas, fmt.Sprintf("freshness p50 (%d samples)", len(lat)), p50, "ms")
	report.Add(fiftyViewsBench, cas, "freshness p99 (target < 100 ms with 50 views)", p99, "ms")
	_, peak := rssMB(s.PID())
	report.Add(fiftyViewsBench, cas, "server peak RSS", peak, "MiB")
	report.Add(fiftyViewsBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	if views > 0 {
		// Every view must have counted every event (the markers aside):
		// a view that fell behind shows here, not as fresh probes.
		execTimed(b, conn, "FLUSH")
		want := sent
		for _, v := range []int{0, views - 1} {
			if n := queryInt(b, conn, fmt.Sprintf("SELECT sum(n) FROM f%d WHERE g >= 0", v)); n != want {
				b.Fatalf("f%d counts %d events, %d were published", v, n, want)
			}
		}
	}
	b.ReportMetric(p99, "p99-ms")
}
