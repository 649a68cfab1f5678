package bench

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/cluster/control"
	"streamdb/ha"
	"streamdb/tests/testutil"
)

// BenchmarkControlLog measures what the cluster's control log adds to an
// epoch: the latency of one epoch's BARRIER and COMMIT appends (each
// waiting for the previous, as the coordinator appends them, with
// Nats-Expected-Last-Sequence), side by side on (a) the embedded NATS
// server a single server runs, R1, with streamdb fsyncing each record
// (broker.JS, as table writes), and (b) three clustered NATS servers in
// this process, R3, JetStream's default sync_interval (an external
// cluster should run sync_interval: always, which adds a fsync per
// replica). It does not include collecting done(e) from other servers.
func BenchmarkControlLog(b *testing.B) {
	epochs := 300
	if report.Mode == "full" {
		epochs = 2000
	}
	report.Configf("ControlLog: %d epochs per case, each BARRIER (2 cuts) then COMMIT, one after the other", epochs)
	cases := []struct {
		name     string
		replicas int
		open     func(b *testing.B) (jetstream.JetStream, func())
	}{
		{"embedded R1, fsynced by streamdb", 1, func(b *testing.B) (jetstream.JetStream, func()) {
			br, err := broker.StartEmbedded("127.0.0.1:-1", b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return br.JS, br.Close
		}},
		{"3-node cluster R3", 3, func(b *testing.B) (jetstream.JetStream, func()) {
			c := testutil.StartNATSCluster(b, 3)
			nc, err := nats.Connect(c.URL())
			if err != nil {
				b.Fatal(err)
			}
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			return js, nc.Close
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			js, stop := c.open(b)
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			lease, err := ha.Open(ctx, js, ha.Options{Group: control.LeaseGroup("bench"), Holder: "bench",
				Replicas: c.replicas, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			if err := lease.Acquire(ctx, nil); err != nil {
				b.Fatal(err)
			}
			defer lease.Release(context.Background())
			w, err := control.OpenWriter(ctx, js, "bench", c.replicas, lease)
			if err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, epochs)
			start := time.Now()
			for e := uint64(1); e <= uint64(epochs); e++ {
				t0 := time.Now()
				if _, err := w.Barrier(ctx, e, map[string]uint64{"orders": e * 100, "streamdb.table.t": e}, false); err != nil {
					b.Fatal(err)
				}
				if _, err := w.Commit(ctx, e); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			wall := time.Since(start)
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			report.Add("ControlLog", c.name, "epoch append p50", pct(0.50), "ms")
			report.Add("ControlLog", c.name, "epoch append p99", pct(0.99), "ms")
			report.Add("ControlLog", c.name, "epoch append max", float64(lat[len(lat)-1].Microseconds())/1000, "ms")
			report.Add("ControlLog", c.name, "epochs recorded", float64(epochs)/wall.Seconds(), "epochs/s")
			b.Logf("%s: p50 %.2f ms, p99 %.2f ms, %s", c.name, pct(0.5), pct(0.99), fmt.Sprint(wall))
		})
	}
}
