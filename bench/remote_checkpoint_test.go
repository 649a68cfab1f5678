package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

const remoteCheckpointBench = "remote checkpoints"

// BenchmarkRemoteCheckpoint measures what uploading checkpoints to a
// JetStream object store bucket (state.checkpoints.dir =
// nats-object://BUCKET) costs in throughput against local checkpoints,
// side by side in one run, in the order local, bucket, local, bucket.
// Each run is a fresh server with its embedded NATS (the bucket is on the
// server's own connection) and checkpoints every 1 s: a view (count and
// sum per key) on an empty stream, ALTER SYSTEM PAUSE, the backlog
// published, ALTER SYSTEM RESUME; the rate is events / (time from RESUME
// until the view counts every event).
func BenchmarkRemoteCheckpoint(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("remote checkpoints: %d events over %d keys; view SELECT k, count(*), sum(v) GROUP BY k; checkpoints every 1 s, local vs nats-object:// bucket on the embedded NATS", sz.backlog, sz.backlogKeys)
	rates := map[string][]float64{}
	for i, where := range []string{"local", "bucket", "local", "bucket"} {
		b.Run(fmt.Sprintf("run=%d/checkpoints=%s", i+1, where), func(b *testing.B) {
			rates[where] = append(rates[where], remoteCheckpointRun(b, i+1, where, sz))
		})
	}
	local, remote := Summarize(rates["local"]), Summarize(rates["bucket"])
	if local.N > 0 && remote.N > 0 {
		report.Add(remoteCheckpointBench, "summary", fmt.Sprintf("rate with local checkpoints, mean of %d", local.N), local.Mean, "events/s")
		report.Add(remoteCheckpointBench, "summary", fmt.Sprintf("rate with checkpoints in a bucket, mean of %d", remote.N), remote.Mean, "events/s")
		report.Add(remoteCheckpointBench, "summary", "bucket / local", remote.Mean/local.Mean, "ratio")
	}
}

func remoteCheckpointRun(b *testing.B, run int, where string, sz sizes) float64 {
	cas := fmt.Sprintf("run %d: %s", run, where)
	settings := map[string]string{"execution.checkpointing.interval": "1s"}
	if where == "bucket" {
		settings["state.checkpoints.dir"] = "nats-object://BENCH_CKPT"
	}
	s := startServer(b, "", settings)
	defer s.Kill(b)
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'bench.remote')")
	execTimed(b, conn, "CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k")
	execTimed(b, conn, "ALTER SYSTEM PAUSE")
	m, keys := sz.backlog, sz.backlogKeys
	publishAll(b, s.NATSURL(), "bench.remote", m, sz.publishers, func(i int) []byte {
		return event(int64(i%keys)*permPrime%int64(keys), int64(i%100))
	})
	execTimed(b, conn, "ALTER SYSTEM RESUME")
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	want := int64(m)
	for queryInt(b, conn, "SELECT coalesce(sum(n), 0) FROM agg") != want {
		select {
		case <-ctx.Done():
			b.Fatalf("%s: the view did not count %d events in time", cas, m)
		case <-time.After(5 * time.Millisecond):
		}
	}
	took := time.Since(start)
	rate := float64(m) / took.Seconds()
	report.Add(remoteCheckpointBench, cas, "time until the view counts every event", took.Seconds(), "s")
	report.Add(remoteCheckpointBench, cas, "rate", rate, "events/s")
	// A checkpoint waiting for its upload delays the next one
	// (max-concurrent-checkpoints): the count shows how many each run took.
	if fam := s.Metrics(b)["streamdb_checkpoints_completed_total"]; fam != nil && len(fam.GetMetric()) > 0 {
		report.Add(remoteCheckpointBench, cas, "checkpoints completed by the end", fam.GetMetric()[0].GetCounter().GetValue(), "checkpoints")
	}
	// Where the newest completed checkpoint is, to show the case ran as
	// named.
	var loc string
	if err := conn.QueryRow(ctx, "SELECT location FROM streamdb_checkpoints WHERE status = 'completed' ORDER BY id DESC LIMIT 1").Scan(&loc); err != nil {
		b.Fatal(err)
	}
	if (where == "bucket") != strings.HasPrefix(loc, "nats-object://") {
		b.Fatalf("%s: the newest checkpoint is at %s", cas, loc)
	}
	report.Add(remoteCheckpointBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	return rate
}
