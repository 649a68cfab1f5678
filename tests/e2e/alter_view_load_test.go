package e2e

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestAlterViewUnderLoad: while events arrive at about 20,000 a second,
// one ALTER keeps the aggregate (a filter on top) and a second one
// backfills it from JetStream (a filter below it). Once the input is
// read, the altered view, a view reading it and a view of the same stream
// that was not altered all match PostgreSQL over every event.
func TestAlterViewUnderLoad(t *testing.T) {
	seed := testutil.Seed(t, "ALTER_LOAD_SEED")
	p := startAlterPair(t, "alterload.ev")
	const total, rate = 60000, 20000
	rng := rand.New(rand.NewPCG(seed, 23))
	keys, vals := make([]string, total), make([]int64, total)
	for i := range keys {
		keys[i], vals[i] = fmt.Sprintf("k%02d", rng.IntN(40)), rng.Int64N(1000)
	}
	p.event = func(i int) (string, int64) { return keys[i], vals[i] }
	const agg = `SELECT k, count(*) AS c, sum(n) AS s FROM ev`
	p.view(t, "totals", agg+` GROUP BY k`)
	p.view(t, "big", `SELECT count(*) AS groups, sum(c) AS c, sum(s) AS s FROM totals`)
	p.view(t, "flat", `SELECT count(*) AS c, sum(n) AS s, max(n) AS top FROM ev`)

	// The publisher keeps up with rate events a second, checking every 10 ms.
	var sent atomic.Int64
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < total; {
			<-tick.C
			for end := min(int(rate*time.Since(start).Seconds()), total); i < end; i++ {
				// A slow server holds the publisher back (the stall
				// wait) rather than failing it: the test needs the
				// events, not the rate.
				if _, err := p.js.PublishAsync(p.subject, []byte(fmt.Sprintf(`{"k": %q, "n": %d}`, keys[i], vals[i])), jetstream.WithStallWait(time.Minute)); err != nil {
					done <- err
					return
				}
			}
			sent.Store(int64(i))
		}
		select {
		case <-p.js.PublishAsyncComplete():
			done <- nil
		case <-time.After(time.Minute):
			done <- fmt.Errorf("publishes not acknowledged in a minute")
		}
	}()
	waitSent := func(n int64) {
		t.Helper()
		poll(t, time.Minute, func() error {
			if got := sent.Load(); got < n {
				return fmt.Errorf("%d of %d events sent", got, n)
			}
			return nil
		})
	}
	waitSent(total / 3)
	p.alter(t, "totals", "", agg+` GROUP BY k HAVING count(*) > 1500`)
	t.Logf("the ALTER that keeps the aggregate returned with %d of %d events sent", sent.Load(), total)
	waitSent(2 * total / 3)
	p.alter(t, "totals", "", agg+` WHERE n % 4 <> 0 GROUP BY k HAVING count(*) > 1100`)
	t.Logf("the ALTER that backfills returned with %d of %d events sent", sent.Load(), total)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	t.Logf("published %d events in %v (%.0f/s)", total, elapsed.Round(time.Millisecond), total/elapsed.Seconds())
	p.store(t, 0, total)
	p.sent = total
	p.same(t, `SELECT k, c, s FROM totals`, `SELECT groups, c, s FROM big`, `SELECT c, s, top FROM flat`)
}
