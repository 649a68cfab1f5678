package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// faultWriter writes rows through a random server of the cluster, one
// statement at a time, while servers are killed and paused: a table row
// (acct, keyed by k) and mostly a stream event (ev, with its own id).
//
// Outcomes. A statement that succeeded is acknowledged. One whose
// session could not be opened (the connection refused, 57P03 at startup)
// did nothing and is sent again through another server. Any other
// failure (the session cut mid-statement, a timeout, 57P01 when the
// lease moved, any error once the session was open) is ambiguous: it may
// have landed. pgconn.SafeToRetry is not used: with a member killed
// mid-statement it called an INSERT that had landed safe to retry.
// A table row is then sent again until it succeeds or fails with 23505,
// which says the earlier attempt landed; so every table row ends
// acknowledged and the table must hold exactly the rows written. A
// stream event has no key to test, so an ambiguous one is recorded as
// unknown and not sent again: it may be in the stream once or not at all.
type faultWriter struct {
	servers []*testutil.Server
	rng     *rand.Rand

	gate sync.Mutex // held by the writer for each step; pause takes it
	stop chan struct{}
	done chan struct{}

	mu        sync.Mutex
	acct      map[int64][2]int64 // k -> g, v: acknowledged table rows
	events    map[int64][2]int64 // id -> k, v: acknowledged events
	unknown   map[int64][2]int64 // id -> k, v: events whose outcome is unknown
	resent    int                // statements sent again after a failure
	ambiguous int                // failures that may have landed
	lastAck   time.Time          // when the last statement was acknowledged
	maxGap    time.Duration      // the longest time between two since resetGap
	err       error

	// The writer goroutine's own: a session per server, and until when
	// a server that failed is passed over (a client moves on from a
	// server that timed out rather than wait on it again at once).
	conns    map[*testutil.Server]*pgx.Conn
	badUntil map[*testutil.Server]time.Time
}

func startFaultWriter(t *testing.T, servers []*testutil.Server, seed uint64) *faultWriter {
	w := &faultWriter{
		servers:  servers,
		rng:      rand.New(rand.NewPCG(seed, 45)),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		acct:     map[int64][2]int64{},
		events:   map[int64][2]int64{},
		unknown:  map[int64][2]int64{},
		conns:    map[*testutil.Server]*pgx.Conn{},
		badUntil: map[*testutil.Server]time.Time{},
	}
	go w.run()
	t.Cleanup(w.halt)
	return w
}

func (w *faultWriter) run() {
	defer close(w.done)
	defer func() {
		for _, c := range w.conns {
			c.Close(context.Background())
		}
	}()
	var k, id int64
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		w.gate.Lock()
		err := w.step(k, &id)
		w.gate.Unlock()
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			return
		}
		k++
	}
}

// step writes table row k and, three times in four, an event that joins
// an existing row or, sometimes, none.
func (w *faultWriter) step(k int64, id *int64) error {
	g, v := k%7, w.rng.Int64N(1_000_000)
	if err := w.insertRow(k, g, v); err != nil {
		return err
	}
	if w.rng.IntN(4) == 3 {
		return nil
	}
	ek, ev := w.rng.Int64N(k+3), w.rng.Int64N(1000)-300
	*id++
	return w.insertEvent(*id, ek, ev)
}

func (w *faultWriter) insertRow(k, g, v int64) error {
	sql := fmt.Sprintf("INSERT INTO acct VALUES (%d, %d, %d)", k, g, v)
	deadline := time.Now().Add(2 * time.Minute)
	mayHaveLanded := false
	for {
		err := w.exec(sql)
		switch {
		case err == nil:
		case testutil.SQLState(err) == "23505" && mayHaveLanded:
			err = nil // the ambiguous attempt landed
		case testutil.SQLState(err) == "23505":
			return fmt.Errorf("%s: %v, though no earlier attempt may have landed", sql, err)
		case !definite(err):
			mayHaveLanded = true
			w.count(true)
		default:
			w.count(false)
		}
		if err == nil {
			w.mu.Lock()
			w.acct[k] = [2]int64{g, v}
			w.acked()
			w.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no server took it within 2 minutes: %v", sql, err)
		}
		time.Sleep(50 * time.Millisecond) // the writer's pace between attempts
	}
}

func (w *faultWriter) insertEvent(id, k, v int64) error {
	sql := fmt.Sprintf("INSERT INTO ev VALUES (%d, %d, %d)", id, k, v)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := w.exec(sql)
		if err == nil {
			w.mu.Lock()
			w.events[id] = [2]int64{k, v}
			w.acked()
			w.mu.Unlock()
			return nil
		}
		if !definite(err) {
			w.count(true)
			w.mu.Lock()
			w.unknown[id] = [2]int64{k, v}
			w.mu.Unlock()
			return nil
		}
		w.count(false)
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no server took it within 2 minutes: %v", sql, err)
		}
		time.Sleep(50 * time.Millisecond) // the writer's pace between attempts
	}
}

// acked notes an acknowledgement's time; w.mu is held.
func (w *faultWriter) acked() {
	now := time.Now()
	if gap := now.Sub(w.lastAck); !w.lastAck.IsZero() && gap > w.maxGap {
		w.maxGap = gap
	}
	w.lastAck = now
}

// resetGap starts measuring the longest stall of acknowledgements anew;
// it returns the longest one since the last reset.
func (w *faultWriter) resetGap() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	gap := w.maxGap
	w.maxGap, w.lastAck = 0, time.Now()
	return gap
}

func (w *faultWriter) count(ambiguous bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.resent++
	if ambiguous {
		w.ambiguous++
	}
}

// notSent marks a failure before the statement reached any server.
type notSent struct{ err error }

func (e notSent) Error() string { return "not sent: " + e.err.Error() }
func (e notSent) Unwrap() error { return e.err }

// definite reports whether a failed statement certainly did nothing.
func definite(err error) bool {
	var ns notSent
	return errors.As(err, &ns)
}

// exec runs sql through a random server (one that has not failed in
// the last 3 s, while there is one), on a session kept per server and
// dropped after any error (its state is then unknown).
func (w *faultWriter) exec(sql string) error {
	now := time.Now()
	good := slices.DeleteFunc(slices.Clone(w.servers), func(s *testutil.Server) bool { return now.Before(w.badUntil[s]) })
	if len(good) == 0 {
		good = w.servers
	}
	s := good[w.rng.IntN(len(good))]
	err := w.execOn(s, sql)
	if err != nil && testutil.SQLState(err) != "23505" {
		w.badUntil[s] = time.Now().Add(3 * time.Second)
	}
	return err
}

func (w *faultWriter) execOn(s *testutil.Server, sql string) error {
	c := w.conns[s]
	if c == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var err error
		c, err = pgx.Connect(ctx, s.DSN())
		cancel()
		if err != nil {
			return notSent{err}
		}
		w.conns[s] = c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		c.Close(context.Background())
		delete(w.conns, s)
	}
	return err
}

// pause waits for the step under way to end and holds the writer.
func (w *faultWriter) pause() { w.gate.Lock() }

// resume lets a paused writer go on.
func (w *faultWriter) resume() { w.gate.Unlock() }

func (w *faultWriter) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// failed is the error that stopped the writer, if any.
func (w *faultWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// rows is the number of acknowledged table rows.
func (w *faultWriter) rows() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acct)
}

// waitRows waits until n more table rows are acknowledged: the cluster
// takes writes.
func (w *faultWriter) waitRows(t *testing.T, n int, timeout time.Duration, what string) {
	t.Helper()
	want := w.rows() + n
	testutil.Poll(t, timeout, what, func() error {
		if err := w.failed(); err != nil {
			t.Fatalf("writer: %v", err)
		}
		if got := w.rows(); got < want {
			return fmt.Errorf("%d table rows acknowledged, want %d", got, want)
		}
		return nil
	})
}

// snapshot copies what the writer recorded; call it paused.
func (w *faultWriter) snapshot() (acct, events, unknown map[int64][2]int64, resent, ambiguous int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cp := func(m map[int64][2]int64) map[int64][2]int64 {
		out := make(map[int64][2]int64, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return cp(w.acct), cp(w.events), cp(w.unknown), w.resent, w.ambiguous
}
