package bench

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

const windowJoinSteadyBench = "window join, steady"

// windowJoinSteadySettings returns the pairs of events per second (one
// event on each of the two streams per pair) and how long they run:
// BENCH_WJ_RATE (default 25,000 pairs, so 50,000 events/s) and
// BENCH_WJ_SECONDS (default 120 in quick mode, 600 in full).
func windowJoinSteadySettings(b *testing.B) (pairs int, d time.Duration) {
	pairs, secs := 25_000, 120
	if report.Mode == "full" {
		secs = 600
	}
	for _, o := range []struct {
		env string
		dst *int
	}{{"BENCH_WJ_RATE", &pairs}, {"BENCH_WJ_SECONDS", &secs}} {
		if v := os.Getenv(o.env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				b.Fatalf("%s=%q: want a positive integer", o.env, v)
			}
			*o.dst = n
		}
	}
	return pairs, time.Duration(secs) * time.Second
}

// BenchmarkWindowJoinSteady is issue 18's unbounded-stream figure: a
// 1-second TUMBLE join of two watermarked streams fed at a steady rate,
// with event time the wall clock, so windows close as the run goes on and
// the join must free their state by watermark for memory to stay flat. It
// samples the server's RSS every 10 seconds and reports it at minute 1
// (or a tenth of a shorter run) and at the end, their ratio (target: the
// end within 10% of minute 1 over 10 minutes), and whether the view kept
// up: every pair matches exactly once, so the view's count must reach the
// pairs sent.
func BenchmarkWindowJoinSteady(b *testing.B) {
	pairs, d := windowJoinSteadySettings(b)
	report.Configf("window join, steady: %d events/s (%d per stream) for %s; a 1-second TUMBLE join of two watermarked streams on a key every pair shares, event time the wall clock", 2*pairs, pairs, d)
	s := startServer(b, "", nil)
	defer stopServer(b, s)
	conn := s.Conn(b)
	createWindowJoin(b, conn, "sa", "sb", "swj")
	// Pair i: key i on both streams at the same instant, so it joins
	// itself only, in one window.
	pr := startPacedProducer(b, s.NATSURL(), pairs, func(p *asyncPublisher, i int64) error {
		ev := fmt.Appendf(nil, `{"k":%d,"v":%d,"ts":%d}`, i, i, time.Now().UnixMilli())
		if err := p.publish("bench.sa", ev); err != nil {
			return err
		}
		return p.publish("bench.sb", ev)
	})
	first := min(d/10, time.Minute)
	start := time.Now()
	var atFirst, atEnd float64
	var firstAt time.Duration
	tick := time.NewTicker(10 * time.Second)
	for now := range tick.C {
		rss, _ := rssMB(s.PID())
		if atFirst == 0 && now.Sub(start) >= first {
			atFirst, firstAt = rss, now.Sub(start).Round(time.Second)
		}
		if now.Sub(start) >= d {
			atEnd = rss
			break
		}
	}
	tick.Stop()
	sent := pr.stop(b)
	_, peak := rssMB(s.PID())
	// One pair 5 seconds ahead moves the watermarks past every window
	// sent, in case the view emits a window only when it closes; it
	// joins itself too. A view that kept up counts every pair within
	// seconds.
	stopped := time.Now()
	p, err := newPublisher(s.NATSURL())
	if err != nil {
		b.Fatal(err)
	}
	closing := fmt.Appendf(nil, `{"k":-1,"v":0,"ts":%d}`, time.Now().Add(5*time.Second).UnixMilli())
	for _, subject := range []string{"bench.sa", "bench.sb"} {
		if err := p.publish(subject, closing); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.wait(time.Minute); err != nil {
		b.Fatal(err)
	}
	p.close()
	waitCount(b, conn, "SELECT sum(n) FROM swj", sent+1)
	lag := time.Since(stopped)
	report.Add(windowJoinSteadyBench, "run", "pairs published", float64(sent), "pairs")
	report.Add(windowJoinSteadyBench, "run", "rate reached by the producer", float64(2*sent)/d.Seconds(), "events/s")
	report.Add(windowJoinSteadyBench, "run", fmt.Sprintf("server RSS after %s", firstAt), atFirst, "MiB")
	report.Add(windowJoinSteadyBench, "run", fmt.Sprintf("server RSS after %s", d), atEnd, "MiB")
	report.Add(windowJoinSteadyBench, "run", "RSS at the end / at the first sample (target <= 1.1)", atEnd/atFirst, "ratio")
	report.Add(windowJoinSteadyBench, "run", "server peak RSS", peak, "MiB")
	report.Add(windowJoinSteadyBench, "run", "time after the producer stopped until the view counted every pair", lag.Seconds(), "s")
}
