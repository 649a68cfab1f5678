// Package ingest benchmarks how fast views catch up on a JetStream backlog,
// next to the raw JetStream read rate measured in the same run. It runs the
// engine in process (embedded NATS, Pebble in a temp directory), so that a
// CPU profile and allocation counts cover the whole server side.
//
//	go test -run '^$' -bench Ingest -benchtime 1x ./bench/ingest/
//
// INGEST_EVENTS (default 500000) and INGEST_KEYS (default 100000) size the
// backlog; INGEST_VIEWS (say "groupby") runs only the named views;
// INGEST_RAW=0 skips the raw read before each view (which reads the whole
// backlog again); INGEST_RSS_EVERY (a duration such as 1m) prints the
// process's RSS and Go heap to stderr at that interval while it runs, and
// each view reports the peak RSS (VmHWM) after it, so a view's memory can
// be followed as its keys outgrow the caches; INGEST_CPUPROFILE=prefix writes prefix-<view>.pprof per view
// covering only its CREATE (the backfill); INGEST_MEMPROFILE=prefix writes
// the cumulative allocation profile after each view. Periodic checkpoints
// are off unless INGEST_CHECKPOINT_INTERVAL (a duration; the server's
// default is 1s) turns them on; every other setting is the server's
// default, and the process runs with the server's GC target and C
// allocator settings (node.TuneProcess). Figures are reported, never
// asserted.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/config"
	"streamdb/meta"
	"streamdb/node"
	"streamdb/pgwire"
	"streamdb/sql"
	"streamdb/types"

	"streamdb/tests/testutil"
)

const subject = "ingest.ev"

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// event renders event i: ~120 bytes with a key, a value, an epoch-millis
// timestamp and a text field the stream's schema does not declare.
func event(dst []byte, i, keys int) []byte {
	k := int64(i%keys) * 1_000_003 % int64(keys) // every key once per round, scattered
	dst = append(dst, `{"k":`...)
	dst = strconv.AppendInt(dst, k, 10)
	dst = append(dst, `,"v":`...)
	dst = strconv.AppendInt(dst, int64(i%100), 10)
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, 1_700_000_000_000+int64(i), 10)
	dst = append(dst, `,"note":"padding padding padding padding padding padding padding"}`...)
	return dst
}

type discard struct{}

func (discard) WriteRow(types.Row) error { return nil }

func execSQL(b *testing.B, sess pgwire.Session, q string) time.Duration {
	b.Helper()
	start := time.Now()
	p, err := sess.Prepare(context.Background(), q, nil)
	if err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	if _, err := p.Execute(context.Background(), nil, discard{}); err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	return time.Since(start)
}

func publish(b *testing.B, url string, n, keys int) {
	b.Helper()
	const workers = 2
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		nc, err := nats.Connect(url)
		if err != nil {
			b.Fatal(err)
		}
		js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer nc.Close()
			var buf []byte
			for i := w; i < n; i += workers {
				buf = event(buf[:0], i, keys)
				for {
					_, err := js.PublishAsync(subject, append([]byte(nil), buf...))
					if err == nil {
						break
					}
					if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
						errs <- err
						return
					}
					time.Sleep(time.Millisecond) // backs off while too many publishes await acknowledgement
				}
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(5 * time.Minute):
				errs <- fmt.Errorf("publishes not acknowledged")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// rawRead reads the whole backlog with an ordered consumer, touching each
// message's data and metadata but decoding nothing: the ceiling.
func rawRead(b *testing.B, url, jsStream string, n int) float64 {
	b.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	cons, err := js.OrderedConsumer(ctx, jsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	var got, bytes int
	start := time.Now()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, _ := m.Metadata()
		bytes += len(m.Data())
		got++
		if got == n || (meta != nil && meta.NumPending == 0 && got >= n) {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	<-done
	d := time.Since(start)
	cc.Stop()
	return float64(n) / d.Seconds()
}

func BenchmarkIngest(b *testing.B) {
	n, keys := envInt("INGEST_EVENTS", 500_000), envInt("INGEST_KEYS", 100_000)
	node.TuneProcess() // the server's GC target and C allocator, so RSS is the server's
	cfg := config.Defaults()
	cfg.DataDir = b.TempDir()
	cfg.NATSListen = freeAddr(b)
	cfg.Values["execution.checkpointing.interval"] = "0"
	if v := os.Getenv("INGEST_CHECKPOINT_INTERVAL"); v != "" {
		if err := cfg.Set("execution.checkpointing.interval", v); err != nil {
			b.Fatalf("INGEST_CHECKPOINT_INTERVAL: %v", err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	nd, err := node.Open(cfg, log, node.Options{})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := sql.Open(meta.NewNode(nd), log, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	sess, err := eng.NewSession(context.Background(), map[string]string{"user": "bench"})
	if err != nil {
		b.Fatal(err)
	}
	execSQL(b, sess, "CREATE STREAM ev (k BIGINT, v BIGINT, ts TIMESTAMP) WITH (subject = '"+subject+"')")
	start := time.Now()
	publish(b, eng.NATSURL(), n, keys)
	b.Logf("published %d events over %d keys in %v", n, keys, time.Since(start).Round(time.Millisecond))

	jsStream := findStream(b, eng.NATSURL())

	views := []struct{ name, query string }{
		{"groupby", "SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k"},
		{"countsum", "SELECT count(*) AS n, sum(v) AS s FROM ev"},
		{"passthrough", "SELECT k, v, ts FROM ev WHERE v >= 0"},
	}
	if every, err := time.ParseDuration(os.Getenv("INGEST_RSS_EVERY")); err == nil && every > 0 {
		stop := sampleMemory(every, start)
		defer stop()
	}
	only := os.Getenv("INGEST_VIEWS")
	writeAllocs(b, "start")
	for _, v := range views {
		if only != "" && !slices.Contains(strings.Split(only, ","), v.name) {
			continue
		}
		// The ceiling, read right before each view: the machine is shared
		// and its speed drifts, so each view is compared with its neighbour.
		raw := math.NaN()
		if os.Getenv("INGEST_RAW") != "0" {
			raw = rawRead(b, eng.NATSURL(), jsStream, n)
			b.ReportMetric(raw, v.name+"-raw-read-msgs/s")
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if prefix := os.Getenv("INGEST_CPUPROFILE"); prefix != "" {
			f, err := os.Create(prefix + "-" + v.name + ".pprof")
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
		}
		d := execSQL(b, sess, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
		if os.Getenv("INGEST_CPUPROFILE") != "" {
			pprof.StopCPUProfile()
		}
		runtime.ReadMemStats(&after)
		writeAllocs(b, v.name)
		rate := float64(n) / d.Seconds()
		allocs := float64(after.Mallocs-before.Mallocs) / float64(n)
		bytesPer := float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
		b.ReportMetric(rate, v.name+"-events/s")
		b.ReportMetric(allocs, v.name+"-allocs/event")
		if !math.IsNaN(raw) {
			b.ReportMetric(rate/raw, v.name+"-ratio")
		}
		_, peak := testutil.ProcessRSS(os.Getpid())
		b.ReportMetric(float64(peak)/(1<<20), v.name+"-peak-RSS-MiB")
		b.Logf("%-12s %7.0f events/s  raw read %7.0f msgs/s  ratio %.2f  %5.1f allocs/event  %5.0f B/event  GC cycles %d  peak RSS so far %d MiB",
			v.name, rate, raw, rate/raw, allocs, bytesPer, after.NumGC-before.NumGC, peak>>20)
		// Drop the view so the next one runs alone.
		execSQL(b, sess, "DROP MATERIALIZED VIEW "+v.name)
	}
}

// sampleMemory prints the RSS, its peak and the Go heap in use to stderr
// every interval until the returned function is called.
func sampleMemory(every time.Duration, since time.Time) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			cur, peak := testutil.ProcessRSS(os.Getpid())
			fmt.Fprintf(os.Stderr, "ingest: %v  RSS %d MiB  peak %d MiB  heap in use %d MiB\n",
				time.Since(since).Round(time.Second), cur>>20, peak>>20, ms.HeapInuse>>20)
		}
	}()
	return func() { close(done) }
}

func findStream(b *testing.B, url string) string {
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	name, err := js.StreamNameBySubject(context.Background(), subject)
	if err != nil {
		b.Fatal(err)
	}
	return name
}

// writeAllocs writes the cumulative allocation profile when
// INGEST_MEMPROFILE is set: read one view's share with pprof -base of the
// file written before it ("start" before the first view).
func writeAllocs(b *testing.B, name string) {
	prefix := os.Getenv("INGEST_MEMPROFILE")
	if prefix == "" {
		return
	}
	f, err := os.Create(prefix + "-" + name + ".pprof")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
