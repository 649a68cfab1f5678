package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

const chainBench = "view chain"

// chainSQL is a chain of four views over stream ev, each over the one
// before; the first is also the single view the chain is compared with.
var chainSQL = []string{
	"CREATE MATERIALIZED VIEW c1 AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k",
	"CREATE MATERIALIZED VIEW c2 AS SELECT k, n, total FROM c1 WHERE total >= 0",
	"CREATE MATERIALIZED VIEW c3 AS SELECT k % 100 AS b, sum(n) AS n, sum(total) AS total FROM c2 GROUP BY k % 100",
	"CREATE MATERIALIZED VIEW c4 AS SELECT sum(n) AS n, sum(total) AS total FROM c3",
}

// BenchmarkViewChain measures issue 17's chain figure: the events/s of one
// GROUP BY view over a stream, and of a chain of four views each over the
// one before (the same view, a filter, a regrouping, a total), side by
// side in one run, in the order one, chain, chain, one so that drift on a
// busy machine falls on both alike. Each run is a fresh server: views are
// created on the empty stream, ALTER SYSTEM PAUSE, the backlog is
// published, ALTER SYSTEM RESUME, and the rate is events / (time from
// RESUME until the last view counts every event).
func BenchmarkViewChain(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("view chain: %d events over %d keys published while paused; one view (%s) vs a chain of four views each over the one before; runs in the order one, chain, chain, one, each a fresh server",
		sz.backlog, sz.backlogKeys, chainSQL[0][len("CREATE MATERIALIZED VIEW c1 AS "):])
	rates := map[int][]float64{}
	for i, views := range []int{1, 4, 4, 1} {
		b.Run(fmt.Sprintf("run=%d/views=%d", i+1, views), func(b *testing.B) {
			rates[views] = append(rates[views], benchChain(b, i+1, views, sz))
		})
	}
	one, chain := Summarize(rates[1]), Summarize(rates[4])
	if one.N > 0 {
		report.Add(chainBench, "one view", fmt.Sprintf("rate, mean of %d runs", one.N), one.Mean, "events/s")
	}
	if chain.N > 0 {
		report.Add(chainBench, "chain of four views", fmt.Sprintf("rate, mean of %d runs", chain.N), chain.Mean, "events/s")
	}
	if one.N > 0 && chain.N > 0 {
		report.Add(chainBench, "chain vs one", "mean rate of the chain / of one view (target >= 0.6)", chain.Mean/one.Mean, "ratio")
	}
}

func benchChain(b *testing.B, run, views int, sz sizes) float64 {
	cas := fmt.Sprintf("run %d: %d view(s)", run, views)
	const subject = "bench.chain"
	s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "0"})
	defer s.Kill(b)
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = '"+subject+"')")
	for _, q := range chainSQL[:views] {
		execTimed(b, conn, q)
	}
	last := fmt.Sprintf("SELECT sum(n) FROM c%d", views)
	execTimed(b, conn, "ALTER SYSTEM PAUSE")
	m, keys := sz.backlog, sz.backlogKeys
	publishAll(b, s.NATSURL(), subject, m, sz.publishers, func(i int) []byte {
		return event(int64(i%keys)*permPrime%int64(keys), int64(i%100))
	})
	execTimed(b, conn, "ALTER SYSTEM RESUME")
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for {
		var n *int64
		if err := conn.QueryRow(ctx, last).Scan(&n); err != nil {
			b.Fatalf("%s: %v", last, err)
		}
		if n != nil && *n == int64(m) {
			break
		}
		if n != nil && *n > int64(m) {
			b.Fatalf("%s = %d, only %d events were published", last, *n, m)
		}
		select {
		case <-ctx.Done():
			b.Fatalf("c%d did not count the %d events in time", views, m)
		case <-time.After(5 * time.Millisecond):
		}
	}
	d := time.Since(start)
	rate := float64(m) / d.Seconds()
	report.Add(chainBench, cas, "time until the last view counts every event", d.Seconds(), "s")
	report.Add(chainBench, cas, "rate", rate, "events/s")
	_, peak := rssMB(s.PID())
	report.Add(chainBench, cas, "server peak RSS", peak, "MiB")
	report.Add(chainBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	b.ReportMetric(rate, "events/s")
	return rate
}
