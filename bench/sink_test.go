package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const sinkBench = "sink throughput"

// BenchmarkSinkThroughput measures how fast a sink (CREATE SINK) publishes
// a view's changes against the view's own rate, side by side in one run,
// in the order: view alone, changelog sink, Debezium sink, view alone (so
// that drift on a busy machine falls on all alike). Each run is a fresh
// server: the view (a count and sum per key) and its sink are created on
// the empty stream, ALTER SYSTEM PAUSE, the backlog is published, ALTER
// SYSTEM RESUME; the view's rate is events / (time from RESUME until it
// counts every event), the sink's is events / (time from RESUME until
// SHOW SINKS reports no pending epoch after that). Checkpoints every
// 200 ms: a sink publishes an epoch once a checkpoint holds it.
func BenchmarkSinkThroughput(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("sink throughput: %d events over %d keys; view SELECT k, count(*), sum(v) GROUP BY k; checkpoints every 200 ms", sz.backlog, sz.backlogKeys)
	var alone []float64
	type result struct {
		env        string
		view, sink float64
	}
	var results []result
	for i, env := range []string{"", "changelog", "debezium", ""} {
		name := env
		if name == "" {
			name = "none"
		}
		b.Run(fmt.Sprintf("run=%d/sink=%s", i+1, name), func(b *testing.B) {
			view, sink := sinkRun(b, i+1, env, sz)
			if env == "" {
				alone = append(alone, view)
				return
			}
			results = append(results, result{env, view, sink})
		})
	}
	a := Summarize(alone)
	if a.N > 0 {
		report.Add(sinkBench, "view alone", fmt.Sprintf("rate, mean of %d runs", a.N), a.Mean, "events/s")
	}
	for _, r := range results {
		cas := "sink " + r.env
		report.Add(sinkBench, cas, "view rate with the sink", r.view, "events/s")
		report.Add(sinkBench, cas, "sink rate (events through to JetStream's acknowledgement)", r.sink, "events/s")
		if a.N > 0 {
			report.Add(sinkBench, cas, "sink rate / mean rate of the view alone", r.sink/a.Mean, "ratio")
			report.Add(sinkBench, cas, "view rate with the sink / mean rate alone", r.view/a.Mean, "ratio")
		}
	}
}

// sinkRun returns the view's rate and, with a sink of envelope env, the
// sink's rate.
func sinkRun(b *testing.B, run int, env string, sz sizes) (viewRate, sinkRate float64) {
	cas := fmt.Sprintf("run %d: sink %s", run, env)
	if env == "" {
		cas = fmt.Sprintf("run %d: view alone", run)
	}
	s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "200ms"})
	defer s.Kill(b)
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'bench.sink')")
	execTimed(b, conn, "CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k")
	if env != "" {
		execTimed(b, conn, "CREATE SINK out FROM agg INTO 'bench.sink.out' WITH (envelope = '"+env+"')")
	}
	execTimed(b, conn, "ALTER SYSTEM PAUSE")
	m, keys := sz.backlog, sz.backlogKeys
	publishAll(b, s.NATSURL(), "bench.sink", m, sz.publishers, func(i int) []byte {
		return event(int64(i%keys)*permPrime%int64(keys), int64(i%100))
	})
	execTimed(b, conn, "ALTER SYSTEM RESUME")
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// wait polls q until done accepts column col of its first row.
	wait := func(what, q string, col int, done func(string) bool) time.Duration {
		for {
			var v string
			rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				b.Fatalf("%s: %v", q, err)
			}
			if rows.Next() {
				v = string(rows.RawValues()[col])
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
			if done(v) {
				return time.Since(start)
			}
			select {
			case <-ctx.Done():
				b.Fatalf("%s not done in time (last %s)", what, v)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	want := fmt.Sprint(m)
	dView := wait("view", "SELECT sum(n) FROM agg", 0, func(v string) bool { return v == want })
	viewRate = float64(m) / dView.Seconds()
	report.Add(sinkBench, cas, "time until the view counts every event", dView.Seconds(), "s")
	if env != "" {
		dSink := wait("sink", "SHOW SINKS", 7, func(v string) bool { return v == "0" })
		sinkRate = float64(m) / dSink.Seconds()
		report.Add(sinkBench, cas, "time until the sink published every change", dSink.Seconds(), "s")
		rows := queryInt(b, conn, "SELECT count(*) FROM agg")
		report.Add(sinkBench, cas, "view rows at the end", float64(rows), "rows")
	}
	_, peak := rssMB(s.PID())
	report.Add(sinkBench, cas, "server peak RSS", peak, "MiB")
	report.Add(sinkBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	return viewRate, sinkRate
}
