package bench

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const tpBench = "backfill throughput"

// BenchmarkCheckpointThroughput measures how fast a new view catches up on a
// backlog in JetStream, with periodic checkpoints every 1s and with them
// off, side by side in one run. The backlog is published once into a
// template data directory; every measured run starts a fresh server on a
// copy of it, in the order off, 1s, 1s, off so that drift on a busy machine
// falls on both settings alike. The rate is events / (time CREATE
// MATERIALIZED VIEW took): CREATE returns once the backfill is complete.
func BenchmarkCheckpointThroughput(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("backfill throughput: %d events over %d distinct keys (each key %d times) published before the view exists; view SELECT k, count(*), sum(v) FROM ev GROUP BY k; runs in the order off, 1s, 1s, off, each a fresh server on a copy of the same data directory",
		sz.backlog, sz.backlogKeys, sz.backlog/sz.backlogKeys)
	const subject = "bench.tp"
	m, keys := sz.backlog, sz.backlogKeys

	template := b.TempDir()
	s := startServer(b, template, map[string]string{"execution.checkpointing.interval": "0"})
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = '"+subject+"')")
	pub := publishAll(b, s.NATSURL(), subject, m, sz.publishers, func(i int) []byte {
		// Each round of keys events visits every key once, in a scattered order.
		return event(int64(i%keys)*permPrime%int64(keys), int64(i%100))
	})
	report.Add(tpBench, "backlog", "publish (acked)", float64(m)/pub.Seconds(), "events/s")
	conn.Close(b.Context())
	s.Stop(b) // periodic checkpoints are off: a clean stop is safe

	rates := map[string][]float64{}
	for i, iv := range []string{"0", "1s", "1s", "0"} {
		b.Run(fmt.Sprintf("run=%d/checkpoint-interval=%s", i+1, iv), func(b *testing.B) {
			rates[iv] = append(rates[iv], benchBackfill(b, i+1, iv, template, sz))
		})
	}
	off, on := Summarize(rates["0"]), Summarize(rates["1s"])
	if off.N > 0 {
		report.Add(tpBench, "checkpoints off", fmt.Sprintf("backfill rate, mean of %d runs", off.N), off.Mean, "events/s")
	}
	if on.N > 0 {
		report.Add(tpBench, "checkpoints every 1s", fmt.Sprintf("backfill rate, mean of %d runs", on.N), on.Mean, "events/s")
	}
	if off.N > 0 && on.N > 0 {
		report.Add(tpBench, "1s vs off", "mean rate with checkpoints every 1s / with them off", on.Mean/off.Mean, "ratio")
	}
}

// permPrime is coprime to every key count used, so k -> k*permPrime mod keys
// is a permutation.
const permPrime = 1_000_003

func benchBackfill(b *testing.B, run int, interval, template string, sz sizes) float64 {
	cas := fmt.Sprintf("run %d: checkpoints every %s", run, interval)
	if interval == "0" {
		cas = fmt.Sprintf("run %d: checkpoints off", run)
	}
	add := func(name string, v float64, unit string) *Figure { return report.Add(tpBench, cas, name, v, unit) }
	m, keys := sz.backlog, sz.backlogKeys

	dir := filepath.Join(b.TempDir(), "data")
	if out, err := exec.Command("cp", "-a", template, dir).CombinedOutput(); err != nil {
		b.Fatalf("copying the template data directory: %v\n%s", err, out)
	}
	s := startServer(b, dir, map[string]string{"execution.checkpointing.interval": interval})
	conn := s.Conn(b)
	logStart := len(s.Logs())
	d := execTimed(b, conn, "CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k")
	rate := float64(m) / d.Seconds()
	add("CREATE MATERIALIZED VIEW (backfill)", d.Seconds(), "s")
	add("backfill rate", rate, "events/s")
	_, peak := rssMB(s.PID())
	add("server peak RSS", peak, "MiB")

	ckpts := checkpointsInLog(s.Logs()[logStart:])
	var periodic int
	var pauseSum, pauseMax, durMax time.Duration
	for _, c := range ckpts {
		if c.trigger == "periodic" {
			periodic++
		}
		pauseSum += c.pause
		pauseMax = max(pauseMax, c.pause)
		durMax = max(durMax, c.duration)
	}
	add("checkpoints completed during CREATE (incl. its DDL checkpoint)", float64(len(ckpts)), "count")
	if len(ckpts) > 0 {
		add("checkpoint duration max", ms(durMax), "ms")
		add("checkpoint pause total", ms(pauseSum), "ms")
		add("checkpoint pause max", ms(pauseMax), "ms")
	}
	if interval != "0" && periodic == 0 {
		report.Notef("backfill throughput %s: no periodic checkpoint completed during the backfill (%v)", cas, d)
	}
	if rows, sum := countAndSum(b, conn); rows != int64(min(m, keys)) || sum != int64(m) {
		report.Notef("backfill throughput %s: the view has %d rows and sum(n) %d, want %d and %d", cas, rows, sum, min(m, keys), m)
	}
	add("machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	b.ReportMetric(rate, "events/s")
	// SIGKILL, not SIGTERM: a SIGTERM while a periodic checkpoint runs can
	// crash the server ("panic: pebble: closed"), which is not what this
	// benchmark measures.
	s.Kill(b)
	return rate
}
