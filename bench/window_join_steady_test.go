package bench

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"streamdb/tests/testutil"
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
// (or a tenth of a shorter run) and at the end, and the means over the
// first and the last minute, their ratios (target: the
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
	// The samples of the first and the last span of length first: one
	// sample depends on where the garbage collector is in its cycle, so
	// each end is also given as the mean over its span.
	var firstSpan, lastSpan []float64
	tick := time.NewTicker(10 * time.Second)
	for now := range tick.C {
		rss, _ := rssMB(s.PID())
		if os.Getenv("BENCH_WJ_TRACE") != "" {
			traceMemory(b, s, now.Sub(start), rss)
		}
		if atFirst == 0 && now.Sub(start) >= first {
			atFirst, firstAt = rss, now.Sub(start).Round(time.Second)
		}
		if now.Sub(start) <= first {
			firstSpan = append(firstSpan, rss)
		}
		if now.Sub(start) > d-first {
			lastSpan = append(lastSpan, rss)
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
	if f, l := Summarize(firstSpan), Summarize(lastSpan); f.N > 0 && l.N > 0 {
		report.Add(windowJoinSteadyBench, "run", fmt.Sprintf("mean server RSS over the first %s (%d samples)", first, f.N), f.Mean, "MiB")
		report.Add(windowJoinSteadyBench, "run", fmt.Sprintf("mean server RSS over the last %s (%d samples)", first, l.N), l.Mean, "MiB")
		report.Add(windowJoinSteadyBench, "run", "mean RSS over the last span / over the first", l.Mean/f.Mean, "ratio")
	}
	report.Add(windowJoinSteadyBench, "run", "server peak RSS", peak, "MiB")
	report.Add(windowJoinSteadyBench, "run", "time after the producer stopped until the view counted every pair", lag.Seconds(), "s")
}

// traceMemory prints, when BENCH_WJ_TRACE is set, where the server's
// memory is at one RSS sample: the Go heap, the join state rows, the Pebble
// block cache, and what is outside Go's memory (RSS less what Go holds from
// the system: C allocations such as Pebble's memtables and cached blocks),
// so that a run whose RSS grows shows what grows.
func traceMemory(b *testing.B, s *testutil.Server, at time.Duration, rss float64) {
	m := s.Metrics(b)
	sum := func(name string) float64 {
		var v float64
		for _, x := range m[name].GetMetric() {
			if g := x.GetGauge(); g != nil {
				v += g.GetValue()
			} else if c := x.GetCounter(); c != nil {
				v += c.GetValue()
			}
		}
		return v
	}
	const mib = 1 << 20
	fmt.Fprintf(os.Stderr, "wj %4ds RSS %4.0f MiB  heap in use %4.0f  heap idle %4.0f  heap released %4.0f  join rows %8.0f  block cache %4.0f  wal %4.0f  disk %6.0f MiB  goroutines %.0f  Go sys %4.0f  outside Go %4.0f MiB\n",
		int(at.Seconds()), rss, sum("go_memstats_heap_inuse_bytes")/mib, sum("go_memstats_heap_idle_bytes")/mib,
		sum("go_memstats_heap_released_bytes")/mib, sum("streamdb_join_state_rows"), sum("streamdb_pebble_block_cache_bytes")/mib,
		sum("streamdb_pebble_wal_bytes")/mib, sum("streamdb_pebble_disk_usage_bytes")/mib, sum("go_goroutines"), sum("go_memstats_sys_bytes")/mib,
		rss-(sum("go_memstats_sys_bytes")-sum("go_memstats_heap_released_bytes"))/mib)
}
