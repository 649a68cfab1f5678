package recovery

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestSinkCrashLoop kills streamdb with SIGKILL 20 times at random moments
// (from the seed) while a producer publishes about 2000 events per second
// to a stream (a standalone NATS keeps the input and the sinks' subjects
// across kills), restarting it each time. Two sinks publish two views: a
// changelog sink of a keyed aggregate and a Debezium sink of a view over
// that aggregate (a multiset, retracting). At the end a consumer that
// applies every message on each sink's subject holds exactly the view's
// rows, no Nats-Msg-Id occurs twice, and the aggregate counts every
// published event once.
func TestSinkCrashLoop(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, 0x51bc))
	natsURL := testutil.StartNATS(t)
	cfg := writeConfig(t, "execution.checkpointing.interval=100ms")
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE STREAM ev (k bigint, v bigint) WITH (subject = 'sinkcrash.ev')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k",
		"CREATE MATERIALIZED VIEW spread AS SELECT n % 7 AS bucket FROM agg",
		"CREATE SINK agg_out FROM agg INTO 'sinkcrash.agg'",
		"CREATE SINK spread_out FROM spread INTO 'sinkcrash.spread' WITH (envelope = 'debezium')")

	_, js := testutil.JetStream(t, natsURL)
	var sent atomic.Int64
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; {
			select {
			case <-stop:
				select {
				case <-js.PublishAsyncComplete():
					done <- nil
				case <-time.After(time.Minute):
					done <- fmt.Errorf("publishes not acknowledged within a minute")
				}
				return
			case <-tick.C:
			}
			for range 10 { // ~2000 events/s
				msg := fmt.Sprintf(`{"k": %d, "v": %d}`, i%40, i)
				if _, err := js.PublishAsync("sinkcrash.ev", []byte(msg)); err != nil {
					done <- err
					return
				}
				i++
				sent.Add(1)
			}
		}
	}()

	const kills = 20
	start := time.Now()
	for i := 1; i <= kills; i++ {
		time.Sleep(time.Duration(200+rng.IntN(900)) * time.Millisecond) // the kill moment, chosen by the seed
		if !srv.Running() {
			t.Fatalf("kill %d: streamdb died on its own before it was killed", i)
		}
		srv.Kill(t)
		srv.Restart(t)
	}
	t.Logf("%d kills in %v", kills, time.Since(start).Round(time.Millisecond))
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "FLUSH")
	if got, want := testutil.Scalar(t, conn, "SELECT sum(n) FROM agg"), fmt.Sprint(sent.Load()); got != want {
		t.Fatalf("agg counts %s events, %s were published", got, want)
	}
	for _, s := range []struct {
		subject, envelope, view string
		cols                    []string
	}{
		{"sinkcrash.agg", "changelog", "agg", []string{"k", "n", "total"}},
		{"sinkcrash.spread", "debezium", "spread", []string{"bucket"}},
	} {
		want := testutil.SortedRows(t, conn, "SELECT * FROM "+s.view)
		var feed *testutil.SinkFeed
		testutil.Poll(t, time.Minute, "consumer of "+s.subject+" equals "+s.view, func() error {
			f, err := testutil.ReadSink(js, s.subject, s.envelope, s.cols)
			if err != nil {
				return err
			}
			if id := f.DuplicateID(); id != "" {
				t.Fatalf("%s: Nats-Msg-Id %s published twice", s.subject, id)
			}
			if got := f.Sorted(); !slices.Equal(got, want) {
				return fmt.Errorf("consumer has %d rows %v, view has %d %v", len(got), got, len(want), want)
			}
			feed = f
			return nil
		})
		t.Logf("%s: %d messages rebuild %s (%d rows)", s.subject, len(feed.Msgs), s.view, len(want))
	}
}
