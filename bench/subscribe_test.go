package bench

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const subscribeBench = "subscribe latency"

// BenchmarkSubscribeLatency measures, under a background load of update
// events, the time from publishing a marker event to a SUBSCRIBE client
// receiving the view's change for it: p50 and p99. The view keeps only the
// markers (k < 0), so every event passes through it but only markers reach
// the subscriber. BENCH_SUBSCRIBE_RATE sets the load (events/s; 50,000 in
// full mode, 20,000 in quick mode).
func BenchmarkSubscribeLatency(b *testing.B) {
	rate, dur := 20_000, 10*time.Second
	if report.Mode == "full" {
		rate, dur = 50_000, 60*time.Second
	}
	if v := os.Getenv("BENCH_SUBSCRIBE_RATE"); v != "" {
		var err error
		if rate, err = strconv.Atoi(v); err != nil || rate <= 0 {
			b.Fatalf("BENCH_SUBSCRIBE_RATE=%q: want a positive integer", v)
		}
	}
	report.Configf("subscribe latency: markers every 20 ms for %s under %d update events/s on the same stream; a view keeping the markers; one SUBSCRIBE client", dur, rate)
	s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "0"})
	defer s.Kill(b)
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'bench.sub')")
	execTimed(b, conn, "CREATE MATERIALIZED VIEW markers AS SELECT k, v FROM ev WHERE k < 0")

	sub := s.Conn(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := sub.Query(ctx, "SUBSCRIBE markers WITH (snapshot = false)", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	sent := map[int64]time.Time{}
	var lats []float64
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for rows.Next() {
			raw := rows.RawValues()
			at := time.Now()
			v, err := strconv.ParseInt(string(raw[3]), 10, 64)
			if err != nil {
				continue
			}
			mu.Lock()
			if t0, ok := sent[v]; ok {
				lats = append(lats, at.Sub(t0).Seconds()*1000)
			}
			mu.Unlock()
		}
	}()

	load := startProducer(b, s.NATSURL(), "bench.sub", rate, 100_000)
	p, err := newPublisher(s.NATSURL())
	if err != nil {
		b.Fatal(err)
	}
	defer p.close()
	tick := time.NewTicker(20 * time.Millisecond)
	end := time.Now().Add(dur)
	var i int64
	for time.Now().Before(end) {
		<-tick.C
		i++
		mu.Lock()
		sent[i] = time.Now()
		mu.Unlock()
		if err := p.publish("bench.sub", event(-1, i)); err != nil {
			b.Fatal(err)
		}
	}
	tick.Stop()
	events := load.stop(b)
	if err := p.wait(time.Minute); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := len(lats)
		mu.Unlock()
		if n >= int(i) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // poll interval, under the deadline above
	}
	cancel()
	<-readDone
	mu.Lock()
	st := Summarize(lats)
	mu.Unlock()
	cas := strconv.Itoa(rate) + " events/s"
	report.Add(subscribeBench, cas, "markers received", float64(st.N), "of "+strconv.FormatInt(i, 10))
	report.Add(subscribeBench, cas, "publish to SUBSCRIBE receipt p50", st.P50, "ms")
	report.Add(subscribeBench, cas, "publish to SUBSCRIBE receipt p99", st.P99, "ms")
	report.Add(subscribeBench, cas, "load events published", float64(events), "events")
	report.Add(subscribeBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
}
