package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
)

// BenchmarkNATSSync measures what fsyncing every JetStream write costs on
// this machine: an embedded nats-server (as streamdb runs it) with the
// default sync_interval (fsync every 2 minutes) against one with
// sync_interval "always" (server.Options.SyncAlways, server-wide); for
// reference "always" with the stream in PersistMode async (the per-stream
// opt-out JetStream offers, which also acknowledges before the write
// reaches the OS); and what streamdb does with synchronous_commit on: the
// default server, with streamdb's broker fsyncing the stream's files before
// it reports an ack (group commit; broker/sync.go). For each: (a)
// synchronous publishes of 200-byte messages from 1, 8 and 64 concurrent
// publishers sharing one connection (as streamdb's sessions share its
// broker connection) and (b) async publish throughput from 1 and 4
// connections (stream ingestion by producers).
func BenchmarkNATSSync(b *testing.B) {
	dur := 2 * time.Second
	if report.Mode == "full" {
		dur = 6 * time.Second
	}
	report.Configf("NATSSync: 200-byte messages, %v per case, file storage, one stream per case", dur)
	type mode struct {
		name    string
		always  bool
		persist jetstream.PersistModeType
		// broker: publish the synchronous messages through streamdb's
		// broker.Broker, which fsyncs before it reports an ack
		// (synchronous_commit on); producers publish directly.
		broker bool
	}
	modes := []mode{
		{"sync_interval 2m (default)", false, jetstream.DefaultPersistMode, false},
		{"sync_interval always", true, jetstream.DefaultPersistMode, false},
		{"always, stream persist_mode async", true, jetstream.AsyncPersistMode, false},
		{"default + streamdb fsync (synchronous_commit on)", false, jetstream.DefaultPersistMode, true},
	}
	results := map[string]map[string]float64{} // case -> mode -> msg/s
	var cases []string
	record := func(cas, m string, v float64) {
		if results[cas] == nil {
			results[cas] = map[string]float64{}
			cases = append(cases, cas)
		}
		results[cas][m] = v
	}
	payload := []byte(strings.Repeat("x", 200))
	for _, m := range modes {
		var (
			url  string
			js   jetstream.JetStream
			stop func()
		)
		if m.broker {
			br, err := broker.StartEmbedded("127.0.0.1:-1", b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			if br.SyncMode() != "OS crash (streamdb fsyncs the embedded JetStream streams)" {
				b.Fatalf("broker sync mode %q", br.SyncMode())
			}
			url, js, stop = br.URL, br.JS, br.Close
		} else {
			ns := startNATS(b, m.always)
			nc, err := nats.Connect(ns.ClientURL(), nats.Name("streamdb-bench-sync"))
			if err != nil {
				b.Fatal(err)
			}
			if js, err = jetstream.New(nc); err != nil {
				b.Fatal(err)
			}
			url = ns.ClientURL()
			stop = func() {
				nc.Close()
				ns.Shutdown()
				ns.WaitForShutdown()
			}
		}
		stream := 0
		newStream := func() string {
			stream++
			subj := fmt.Sprintf("sync.%d", stream)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
				Name: fmt.Sprintf("SYNC_%d", stream), Subjects: []string{subj},
				Storage: jetstream.FileStorage, PersistMode: m.persist,
			}); err != nil {
				b.Fatal(err)
			}
			return subj
		}
		for _, p := range []int{1, 8, 64} {
			rate, p50, p99 := syncPublish(b, js, newStream(), payload, p, dur)
			cas := fmt.Sprintf("sync publish, %d publishers", p)
			record(cas, m.name, rate)
			report.Add("NATSSync", m.name, cas, rate, "msg/s")
			report.Add("NATSSync", m.name, cas+" p50", float64(p50.Microseconds()), "µs")
			report.Add("NATSSync", m.name, cas+" p99", float64(p99.Microseconds()), "µs")
		}
		for _, conns := range []int{1, 4} {
			rate := asyncPublish(b, url, newStream(), payload, conns, dur)
			cas := fmt.Sprintf("async publish, %d connections", conns)
			record(cas, m.name, rate)
			report.Add("NATSSync", m.name, cas, rate, "msg/s")
		}
		stop()
	}
	var t strings.Builder
	t.WriteString("| case |")
	for _, m := range modes {
		fmt.Fprintf(&t, " %s |", m.name)
	}
	t.WriteString(" always / default | streamdb fsync / default |\n|---|")
	for range modes {
		t.WriteString("---:|")
	}
	t.WriteString("---:|---:|\n")
	for _, cas := range cases {
		fmt.Fprintf(&t, "| %s |", cas)
		for _, m := range modes {
			fmt.Fprintf(&t, " %.0f |", results[cas][m.name])
		}
		fmt.Fprintf(&t, " %.3f | %.3f |\n", results[cas][modes[1].name]/results[cas][modes[0].name],
			results[cas][modes[3].name]/results[cas][modes[0].name])
	}
	t.WriteString("\nmsg/s, embedded nats-server in the bench process, 200-byte messages. In the streamdb fsync " +
		"mode only the synchronous publishes go through streamdb's broker (as its SQL writes do); async " +
		"publishes come from producers straight to NATS, which keeps its default sync_interval.\n")
	report.AddSection("NATS JetStream: fsync every write vs every 2 minutes", t.String())
	fmt.Print(t.String())
}

// startNATS starts an embedded JetStream server on a free port with its
// store in a temporary directory, syncing every write when always is set.
func startNATS(b *testing.B, always bool) *server.Server {
	b.Helper()
	opts := &server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: b.TempDir(), NoSigs: true, NoLog: true,
		SyncAlways: always,
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		b.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		b.Fatal("embedded NATS did not start")
	}
	if got := ns.JetStreamConfig().SyncAlways; got != always {
		b.Fatalf("JetStream sync always = %v, want %v", got, always)
	}
	return ns
}

// syncPublish runs publishers goroutines, each publishing one message at a
// time and waiting for its acknowledgement, for dur; it returns messages
// per second and the median and 99th percentile publish latency.
func syncPublish(b *testing.B, js jetstream.JetStream, subject string, payload []byte, publishers int, dur time.Duration) (float64, time.Duration, time.Duration) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dur+time.Minute)
	defer cancel()
	var (
		mu   sync.Mutex
		lats []time.Duration
		wg   sync.WaitGroup
		fail atomic.Value
	)
	deadline := time.Now().Add(dur)
	start := time.Now()
	for w := 0; w < publishers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if _, err := js.Publish(ctx, subject, payload); err != nil {
					fail.Store(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := fail.Load().(error); err != nil {
		b.Fatalf("sync publish: %v", err)
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	if len(lats) == 0 {
		return 0, 0, 0
	}
	return float64(len(lats)) / elapsed.Seconds(), lats[len(lats)/2], lats[len(lats)*99/100]
}

// asyncPublish publishes from conns connections with PublishAsync (up to
// 4096 unacknowledged each) for dur, then waits for every acknowledgement;
// it returns acknowledged messages per second over the whole time.
func asyncPublish(b *testing.B, url, subject string, payload []byte, conns int, dur time.Duration) float64 {
	b.Helper()
	var (
		wg   sync.WaitGroup
		sent atomic.Int64
		fail atomic.Value
	)
	deadline := time.Now().Add(dur)
	start := time.Now()
	for c := 0; c < conns; c++ {
		p, err := newPublisher(url)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.close()
			n := int64(0)
			for time.Now().Before(deadline) {
				for i := 0; i < 256; i++ {
					err := p.publish(subject, payload)
					if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
						continue // a full window for over a second: try again
					}
					if err != nil {
						fail.Store(err)
						return
					}
					n++
				}
			}
			if err := p.wait(5 * time.Minute); err != nil {
				fail.Store(err)
			}
			sent.Add(n)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := fail.Load().(error); err != nil {
		b.Fatalf("async publish: %v", err)
	}
	return float64(sent.Load()) / elapsed.Seconds()
}
