package recovery

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestExactlyOnceVersusAtLeastOnce runs a UNION ALL view of two streams
// (the multi-source view, where barrier alignment matters) through repeated
// kill -9 and restart under each checkpointing mode. Under exactly_once the
// final count and sum must equal the truth; under at_least_once they may
// exceed it (replayed input counted twice) but never fall short. The number
// of duplicates is reported, not asserted: it depends on timing.
func TestExactlyOnceVersusAtLeastOnce(t *testing.T) {
	seed := seedFor(t)
	const kills = 5
	for i, mode := range []string{"exactly_once", "at_least_once"} {
		t.Run(mode, func(t *testing.T) {
			n, total, trueN, trueTotal := runUnionChaos(t, mode, seed+uint64(i), kills)
			dups := n - trueN
			switch {
			case mode == "exactly_once" && (n != trueN || total != trueTotal):
				t.Errorf("exactly_once: view has count %d sum %d, the streams hold count %d sum %d (%+d rows)",
					n, total, trueN, trueTotal, dups)
			case n < trueN:
				t.Errorf("%s: view has count %d, fewer than the %d published: input lost", mode, n, trueN)
			case total < trueTotal:
				t.Errorf("%s: view has sum %d, less than the true %d (all values are positive): input lost", mode, total, trueTotal)
			}
			t.Logf("%s: %d events published, view counted %d: %d duplicates after %d crashes", mode, trueN, n, dups, kills)
		})
	}
}

// runUnionChaos publishes to two subjects at a high rate while killing the
// server kills times, then flushes and returns the view's count and sum
// with the true ones.
func runUnionChaos(t *testing.T, mode string, seed uint64, kills int) (n, total, trueN, trueTotal int64) {
	rng := rand.New(rand.NewPCG(seed, 0xabc))
	natsURL := testutil.StartNATS(t)
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: writeConfig(t,
		"execution.checkpointing.mode="+mode, "execution.checkpointing.interval=150ms")})
	conn := srv.Conn(t)
	if got := setting(t, conn, "execution.checkpointing.mode"); got != mode {
		t.Fatalf("SHOW execution.checkpointing.mode = %q, want %q", got, mode)
	}
	testutil.MustExec(t, conn,
		`CREATE STREAM left_events (id BIGINT, x BIGINT) WITH (subject = 'mode.left', format = 'json')`,
		`CREATE STREAM right_events (id BIGINT, x BIGINT) WITH (subject = 'mode.right', format = 'json')`,
		`CREATE MATERIALIZED VIEW both_sides AS SELECT count(*) AS n, sum(x) AS total FROM
		   (SELECT id, x FROM left_events UNION ALL SELECT id, x FROM right_events) AS u`)
	_, js := testutil.JetStream(t, natsURL)

	// Two publishers, one per subject, at different rates so that the
	// sources' barriers rarely arrive together.
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var pubErr error
	for side, cfg := range []struct {
		subject string
		perTick int
	}{{"mode.left", 40}, {"mode.right", 15}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prng := rand.New(rand.NewPCG(seed, uint64(side)))
			ticker := time.NewTicker(10 * time.Millisecond)
			defer ticker.Stop()
			var id int64
			for {
				select {
				case <-stop:
					return
				case <-ticker.C:
				}
				var futures []jetstream.PubAckFuture
				var xs []int64
				for range cfg.perTick {
					id++
					x := prng.Int64N(100) + 1
					msg := fmt.Sprintf(`{"id":%d,"x":%d}`, id, x)
					f, err := js.PublishAsync(cfg.subject, []byte(msg), jetstream.WithMsgID(fmt.Sprintf("%d-%d", side, id)))
					if err != nil {
						mu.Lock()
						pubErr = err
						mu.Unlock()
						return
					}
					futures = append(futures, f)
					xs = append(xs, x)
				}
				for i, f := range futures {
					select {
					case <-f.Ok():
					case err := <-f.Err():
						mu.Lock()
						pubErr = fmt.Errorf("publish to %s: %w", cfg.subject, err)
						mu.Unlock()
						return
					case <-time.After(30 * time.Second):
						mu.Lock()
						pubErr = fmt.Errorf("publish to %s: no ack in 30s", cfg.subject)
						mu.Unlock()
						return
					}
					mu.Lock()
					trueN++
					trueTotal += xs[i]
					mu.Unlock()
				}
			}
		}()
	}
	for i := 1; i <= kills; i++ {
		time.Sleep(time.Duration(100+rng.IntN(700)) * time.Millisecond) // the kill moment, chosen by the seed
		if !srv.Running() {
			t.Fatalf("kill %d: streamdb died on its own", i)
		}
		srv.Kill(t)
		// Down for a moment while the publishers go on, so that the
		// restarted server replays a backlog on both sources at once,
		// when their barriers are the least aligned.
		time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond) // how long it stays down, chosen by the seed
		srv.Restart(t)
		if len(logLines(runLog(srv), "recovering from checkpoint")) == 0 {
			t.Fatalf("restart %d did not recover from a checkpoint:\n%s", i, runLog(srv))
		}
	}
	close(stop)
	wg.Wait()
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "FLUSH")
	_, rows := mustQuery(t, conn, "SELECT n, total FROM both_sides")
	nText, totalText := rows[0][0], rows[0][1]
	return atoi(t, nText), atoi(t, totalText), trueN, trueTotal
}
