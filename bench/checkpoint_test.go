package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const ckptBench = "checkpoint"

// BenchmarkCheckpoint builds a GROUP BY view of N keys, then, with periodic
// checkpoints off, takes manual CHECKPOINTs while a producer keeps updating
// existing keys and a probe measures freshness (publish to visible in a
// SELECT). Last it kills the server (SIGKILL) right after a checkpoint and
// times the restart.
func BenchmarkCheckpoint(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("checkpoint: view sizes %v keys; %d manual CHECKPOINTs 1 s apart per size; %d update events/s to random existing keys while they run; %d parallel async publishers for the load; periodic checkpoints off (execution.checkpointing.interval: 0); barrier interval default (20ms)",
		sz.ckptKeys, sz.checkpoints, sz.updateRate, sz.publishers)
	for _, n := range sz.ckptKeys {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) { benchCheckpoint(b, n, sz) })
	}
}

func benchCheckpoint(b *testing.B, n int, sz sizes) {
	cas := fmt.Sprintf("%s keys", humanCount(n))
	add := func(name string, v float64, unit string) *Figure { return report.Add(ckptBench, cas, name, v, unit) }
	const subject = "bench.ev"

	s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "0"})
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = '"+subject+"')")

	// Load: one event per key, published before the views exist (a live
	// load is slower: publishers and server then share the two cores).
	pub := publishAll(b, s.NATSURL(), subject, n, sz.publishers, func(i int) []byte { return event(int64(i), 1) })
	add("load: publish (acked)", float64(n)/pub.Seconds(), "events/s")
	// The freshness probe reads a one-row view over the same stream, so a
	// poll costs little (a SELECT scans the whole view) while it waits on
	// the same epoch commits as agg. It is created first so that the DDL
	// checkpoint of agg's CREATE, taken before agg's backfill, stays small.
	probeDur := execTimed(b, conn, "CREATE MATERIALIZED VIEW probe AS SELECT k, max(v) AS m FROM ev WHERE k < 0 GROUP BY k")
	add("load: backfill of view probe (WHERE k < 0)", float64(n)/probeDur.Seconds(), "events/s")
	aggDur := execTimed(b, conn, "CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k")
	add("load: backfill of view agg (1 event per key)", float64(n)/aggDur.Seconds(), "events/s")
	execTimed(b, conn, "FLUSH")
	rss, peak := rssMB(s.PID())
	add("server RSS after load", rss, "MiB")
	add("server peak RSS after load", peak, "MiB")
	start := time.Now()
	if rows, sum := countAndSum(b, conn); rows != int64(n) || sum != int64(n) {
		report.Notef("checkpoint %s: view agg has %d rows and sum(n) %d after load, want %d and %d", cas, rows, sum, n, n)
	}
	add("SELECT count(*), sum(n) FROM agg (full scan)", ms(time.Since(start)), "ms")

	// Checkpoints under a steady update load, with the freshness probe.
	prod := startProducer(b, s.NATSURL(), subject, sz.updateRate, n)
	probe := startProber(b, s, subject, "SELECT m FROM probe")
	probeStart := time.Now()
	time.Sleep(sz.baselineTime) // the measured baseline period: the producer and prober run meanwhile
	baseEnd := time.Now()
	var rows []checkpointRow
	var stmts []float64
	var windows [][2]time.Time
	for i := 0; i < sz.checkpoints; i++ {
		t0 := time.Now()
		d := execTimed(b, conn, "CHECKPOINT")
		windows = append(windows, [2]time.Time{t0, time.Now()})
		stmts = append(stmts, ms(d))
		r := newestCheckpoint(b, conn)
		if r.trigger != "manual" || r.status != "completed" {
			report.Notef("checkpoint %s: newest checkpoint after CHECKPOINT is id %d trigger %s status %s", cas, r.id, r.trigger, r.status)
		}
		rows = append(rows, r)
		time.Sleep(time.Second) // CHECKPOINTs 1 s apart, as the README describes
	}
	phaseEnd := time.Now()
	samples := probe.stop(b)
	sent := prod.stop(b)

	// First checkpoint holds the whole loaded state; the later ones are
	// incremental over it.
	first := rows[0]
	add("first CHECKPOINT: duration_ms", first.durationMS, "ms")
	add("first CHECKPOINT: pause_ms", first.pauseMS, "ms")
	add("first CHECKPOINT: size_bytes", float64(first.sizeBytes)/(1<<20), "MiB")
	add("first CHECKPOINT: new_bytes", float64(first.newBytes)/(1<<20), "MiB")
	add("first CHECKPOINT: freshness max while it ran", Summarize(latencies(samples, windows[0][0], windows[0][1])).Max, "ms")
	if len(rows) > 1 {
		var dur, pause, newB []float64
		for _, r := range rows[1:] {
			dur = append(dur, r.durationMS)
			pause = append(pause, r.pauseMS)
			newB = append(newB, float64(r.newBytes)/(1<<20))
		}
		k := fmt.Sprintf("next %d CHECKPOINTs", len(rows)-1)
		sd, sp, sn := Summarize(dur), Summarize(pause), Summarize(newB)
		add(k+": duration_ms median", sd.P50, "ms")
		add(k+": duration_ms max", sd.Max, "ms")
		add(k+": pause_ms median", sp.P50, "ms")
		add(k+": pause_ms max", sp.Max, "ms")
		add(k+": size_bytes (last)", float64(rows[len(rows)-1].sizeBytes)/(1<<20), "MiB")
		add(k+": new_bytes median", sn.P50, "MiB")
	}
	add("CHECKPOINT statement latency max (client)", Summarize(stmts).Max, "ms")

	base := Summarize(latencies(samples, probeStart.Add(500*time.Millisecond), baseEnd))
	add("freshness without checkpoints: median", base.P50, "ms")
	add("freshness without checkpoints: max", base.Max, "ms")
	var during []float64
	for _, w := range windows {
		during = append(during, latencies(samples, w[0], w[1])...)
	}
	dur := Summarize(during)
	add("freshness while a CHECKPOINT runs: median", dur.P50, "ms")
	add("freshness while a CHECKPOINT runs: max (stall)", dur.Max, "ms")
	phase := Summarize(latencies(samples, baseEnd, phaseEnd))
	add("freshness over the checkpoint phase: max", phase.Max, "ms")
	if len(during) == 0 {
		report.Notef("checkpoint %s: no freshness probe overlapped a checkpoint", cas)
	}
	b.ReportMetric(first.durationMS, "first-ckpt-ms")
	b.ReportMetric(dur.Max, "stall-max-ms")

	// Restore: a checkpoint of everything, then SIGKILL and restart.
	execTimed(b, conn, "FLUSH")
	final := execTimed(b, conn, "CHECKPOINT")
	last := newestCheckpoint(b, conn)
	add("final CHECKPOINT before kill: duration_ms", last.durationMS, "ms")
	_ = final
	s.Kill(b)
	t0 := time.Now()
	s.Restart(b)
	ready := time.Since(t0)
	add("restart after kill -9: process start to ready", ms(ready), "ms")
	logs := s.Logs()
	if os.Getenv("BENCH_VERBOSE") != "" {
		b.Logf("server log of the restart:\n%s", logs[strings.LastIndex(logs, "=== testutil:"):])
	}
	if took, ok := lastRestoreTook(logs); ok {
		add(`restart: log "restored state took"`, ms(took), "ms")
	} else {
		report.Notef("checkpoint %s: no \"restored state\" line in the server log after kill -9", cas)
	}
	run := logs[max(0, strings.LastIndex(logs, "=== testutil:")):]
	if !strings.Contains(run, `msg="recovering from checkpoint"`) {
		report.Notef("checkpoint %s: the restart after kill -9 did not log \"recovering from checkpoint\"", cas)
	}
	if took, ok := viewRestoreTook(run, "agg"); ok {
		add(`restart: log "restored materialized view" agg took`, ms(took), "ms")
	}
	rss, peak = rssMB(s.PID())
	add("server RSS after restart", rss, "MiB")
	add("server peak RSS after restart", peak, "MiB")
	conn = s.Conn(b)
	add("restart: first FLUSH", ms(execTimed(b, conn, "FLUSH")), "ms")
	// +1 row: the marker key. sum(n) may exceed the count of sampled
	// markers by one: a marker may have been published as the probe stopped.
	wantSum := int64(n) + sent + int64(len(samples))
	if rows, sum := countAndSum(b, conn); rows != int64(n)+1 || sum < wantSum || sum > wantSum+1 {
		report.Notef("checkpoint %s: after restart agg has %d rows and sum(n) %d, want %d and %d (load + updates + markers)",
			cas, rows, sum, n+1, wantSum)
	}
	add("machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	b.ReportMetric(ms(ready), "restart-ms")
}

// countAndSum reads count(*) and sum(n) of view agg.
func countAndSum(b *testing.B, conn *pgx.Conn) (rows, sum int64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var s *int64
	if err := conn.QueryRow(ctx, "SELECT count(*), sum(n) FROM agg").Scan(&rows, &s); err != nil {
		b.Fatalf("SELECT count(*), sum(n) FROM agg: %v", err)
	}
	if s != nil {
		sum = *s
	}
	return rows, sum
}

func humanCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
