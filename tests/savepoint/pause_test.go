package savepoint

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPauseHoldsUnderLoad: while a producer publishes to JetStream as fast
// as it can, ALTER SYSTEM PAUSE must stop every view from reading: once the
// views have settled after PAUSE (what was read before it is committed at
// the next barriers), their contents stay fixed until RESUME. Repeated many
// times, since a pause that races with a source's read loop could be missed.
func TestPauseHoldsUnderLoad(t *testing.T) {
	rng := seedFor(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	q := viewQueries()
	names := keys(q)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.pause"))
	for _, n := range names {
		testutil.MustExec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, q[n]))
	}
	_, js := testutil.JetStream(t, srv.NATSURL())
	var stop atomic.Bool
	done := make(chan error, 1)
	var published atomic.Int64
	go func() {
		ctx := context.Background()
		for i := int64(1); !stop.Load(); i++ {
			if _, err := js.PublishAsync("ev.pause", []byte(fmt.Sprintf(`{"id":%d,"g":"%c","x":%d}`, i, 'a'+i%5, i%100))); err != nil {
				done <- err
				return
			}
			published.Add(1)
			if i%50 == 0 {
				time.Sleep(10 * time.Millisecond) // paces the producer: about 5000 messages a second
			}
			if i%500 == 0 {
				select {
				case <-js.PublishAsyncComplete():
				case <-time.After(30 * time.Second):
					done <- fmt.Errorf("publish acks timed out")
					return
				}
				_ = ctx
			}
		}
		<-js.PublishAsyncComplete()
		done <- nil
	}()

	const rounds = 15
	moved := 0
	for i := 0; i < rounds && !t.Failed(); i++ {
		time.Sleep(time.Duration(10+rng.IntN(60)) * time.Millisecond) // the PAUSE moment, chosen by the seed
		testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE")
		srv.WaitEpochs(t, 3) // what readers took before PAUSE lands
		a := viewRows(t, conn, names, "")
		srv.WaitEpochs(t, 10)
		b := viewRows(t, conn, names, "")
		for _, n := range names {
			if !slices.Equal(a[n], b[n]) {
				moved++
				t.Errorf("round %d: view %s changed while paused:\n%s", i, n, diffRows(a[n], b[n]))
			}
		}
		testutil.MustExec(t, conn, "ALTER SYSTEM RESUME")
	}
	stop.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	testutil.MustExec(t, conn, "FLUSH")
	msgs := streamMessages(t, js, "ev.pause")
	for _, n := range names {
		if got, want := mustRows(t, conn, "SELECT * FROM "+n), goAnswer(n, msgs); !slices.Equal(want, got) {
			t.Errorf("view %s after RESUME and FLUSH:\n%s", n, diffRows(want, got))
		}
	}
	t.Logf("%d messages published; %d view reads moved while paused", published.Load(), moved)
}
