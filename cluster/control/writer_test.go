package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/ha"
	"streamdb/tests/testutil"
)

const (
	testTTL   = 1500 * time.Millisecond
	testRenew = 300 * time.Millisecond
)

// coordinator is one test coordinator: its lease on a connection of its
// own (closing it stops the renewals, as a paused process's stop) and
// its JetStream context for appends on another.
type coordinator struct {
	leaseConn *nats.Conn
	lease     *ha.Lease
	js        jetstream.JetStream
}

func newCoordinator(t *testing.T, url, cluster, holder string, replicas int) *coordinator {
	t.Helper()
	nc, ljs := testutil.JetStream(t, url)
	_, js := testutil.JetStream(t, url)
	l, err := ha.Open(testutil.Context(t, 30*time.Second), ljs, ha.Options{Group: LeaseGroup(cluster), Holder: holder,
		TTL: testTTL, Renew: testRenew, Replicas: replicas, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &coordinator{leaseConn: nc, lease: l, js: js}
}

func (c *coordinator) take(t *testing.T) {
	t.Helper()
	if err := c.lease.Acquire(testutil.Context(t, 30*time.Second), nil); err != nil {
		t.Fatal(err)
	}
}

func (c *coordinator) open(t *testing.T, cluster string, replicas int) *Writer {
	t.Helper()
	w, err := OpenWriter(testutil.Context(t, 30*time.Second), c.js, cluster, replicas, c.lease)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// epoch appends BARRIER{e} and COMMIT{e}.
func epoch(ctx context.Context, w *Writer, e uint64) error {
	if _, err := w.Barrier(ctx, e, map[string]uint64{"s": e * 10}, e%5 == 0); err != nil {
		return err
	}
	_, err := w.Commit(ctx, e)
	return err
}

// replay reads the whole log through a Checker, failing the test on any
// broken invariant.
func replay(t *testing.T, js jetstream.JetStream, cluster string) ([]Record, *Checker) {
	t.Helper()
	var recs []Record
	c := new(Checker)
	err := NewReader(js, cluster).Replay(testutil.Context(t, 30*time.Second), 0, func(r Record) error {
		recs = append(recs, r)
		return c.Apply(r)
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return recs, c
}

func lastSeq(t *testing.T, js jetstream.JetStream, cluster string) uint64 {
	t.Helper()
	s, err := js.Stream(testutil.Context(t, 10*time.Second), StreamName(cluster))
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(testutil.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// A coordinator paused between its lease check and its append (SIGSTOP)
// wakes after its lease expired and another coordinator took it and
// appended: its append fails on the expected last sequence, and it
// appends nothing more, although nothing told it that it lost the lease
// before it tried.
func TestPausedCoordinatorCannotAppend(t *testing.T) {
	url := testutil.StartNATS(t)
	ctx := testutil.Context(t, time.Minute)
	const cluster = "fence"
	a := newCoordinator(t, url, cluster, "a", 1)
	a.take(t)
	wa := a.open(t, cluster, 1)
	for e := uint64(1); e <= 3; e++ {
		if err := epoch(ctx, wa, e); err != nil {
			t.Fatal(err)
		}
	}

	// a pauses right after its lease check, on its way to append epoch 4.
	paused, resume := make(chan struct{}), make(chan struct{})
	wa.beforePublish = func() { close(paused); <-resume }
	aErr := make(chan error, 1)
	go func() {
		_, err := wa.Barrier(ctx, 4, map[string]uint64{"s": 40}, false)
		aErr <- err
	}()
	<-paused
	a.leaseConn.Close() // no more renewals while paused

	b := newCoordinator(t, url, cluster, "b", 1)
	b.take(t) // once NATS has expired a's lease
	bToken := b.lease.Token()
	if b.lease.Token() <= a.lease.Token() {
		t.Fatalf("b's token %d is not above a's %d", b.lease.Token(), a.lease.Token())
	}
	wb := b.open(t, cluster, 1)
	if wb.LastEpoch() != 3 || wb.Committed() != 3 {
		t.Fatalf("b read the tail as epoch %d committed %d; want 3 and 3", wb.LastEpoch(), wb.Committed())
	}
	if err := epoch(ctx, wb, 4); err != nil {
		t.Fatal(err)
	}

	// a wakes and appends as if it still held the lease.
	before := lastSeq(t, b.js, cluster)
	wa.beforePublish = nil
	close(resume)
	if err := <-aErr; !errors.Is(err, ErrFenced) {
		t.Fatalf("the paused coordinator's append = %v; want ErrFenced", err)
	}
	for e := uint64(5); e <= 6; e++ {
		if _, err := wa.Barrier(ctx, e, nil, false); !errors.Is(err, ErrFenced) {
			t.Fatalf("a's next append (epoch %d) = %v; want ErrFenced", e, err)
		}
	}
	if after := lastSeq(t, b.js, cluster); after != before {
		t.Fatalf("the control stream moved from %d to %d after b's appends: a appended", before, after)
	}
	// Its lease is gone by its own clock too: it cannot open a writer.
	if _, err := OpenWriter(ctx, a.js, cluster, 1, a.lease); !errors.Is(err, ErrFenced) {
		t.Fatalf("OpenWriter with a's lost lease = %v; want ErrFenced", err)
	}
	if err := epoch(ctx, wb, 5); err != nil {
		t.Fatalf("b after a's attempts: %v", err)
	}

	recs, c := replay(t, b.js, cluster)
	if got := c.Committed().Epoch; got != 5 {
		t.Fatalf("committed epoch %d; want 5", got)
	}
	for _, r := range recs {
		if r.Kind == KindBarrier && r.Epoch >= 4 && r.Token < bToken {
			t.Fatalf("epoch %d was appended with token %d, not b's", r.Epoch, r.Token)
		}
	}
}

// Epochs increase across coordinators: a new coordinator reads the tail
// and goes on after the newest barrier; a commit, checkpoint or
// placement out of order is refused before anything is appended.
func TestEpochsMonotonicAcrossCoordinators(t *testing.T) {
	url := testutil.StartNATS(t)
	ctx := testutil.Context(t, time.Minute)
	const cluster = "mono"
	a := newCoordinator(t, url, cluster, "a", 1)
	a.take(t)
	wa := a.open(t, cluster, 1)
	for e := uint64(1); e <= 4; e++ {
		if err := epoch(ctx, wa, e); err != nil {
			t.Fatal(err)
		}
	}
	// Epoch 5's barrier is appended; its commit never is (a stops).
	if _, err := wa.Barrier(ctx, 5, map[string]uint64{"s": 50}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := wa.Placement(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	b := newCoordinator(t, url, cluster, "b", 1)
	b.take(t)
	wb := b.open(t, cluster, 1)
	if wb.LastEpoch() != 5 || wb.Committed() != 4 {
		t.Fatalf("b read epoch %d committed %d; want 5 and 4", wb.LastEpoch(), wb.Committed())
	}
	before := lastSeq(t, b.js, cluster)
	for _, bad := range []func() error{
		func() error { _, err := wb.Barrier(ctx, 5, nil, false); return err },
		func() error { _, err := wb.Barrier(ctx, 2, nil, false); return err },
		func() error { _, err := wb.Commit(ctx, 4); return err },
		func() error { _, err := wb.Commit(ctx, 6); return err },
		func() error { _, err := wb.Checkpoint(ctx, 1, 5, "d"); return err },
		func() error { _, err := wb.Placement(ctx, 1); return err },
	} {
		if err := bad(); !errors.Is(err, ErrOrder) {
			t.Fatalf("out-of-order append = %v; want ErrOrder", err)
		}
	}
	if after := lastSeq(t, b.js, cluster); after != before {
		t.Fatalf("refused appends moved the stream from %d to %d", before, after)
	}
	// b re-drives the open epoch 5 (its barrier is at the tail), then
	// goes on.
	if _, err := wb.Commit(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := wb.Checkpoint(ctx, 1, 5, "d"); err != nil {
		t.Fatal(err)
	}
	if err := epoch(ctx, wb, 6); err != nil {
		t.Fatal(err)
	}
	_, c := replay(t, b.js, cluster)
	if got := c.Committed(); got.Epoch != 6 || got.Cuts["s"] != 60 {
		t.Fatalf("committed %+v; want epoch 6 with cut s=60", got)
	}
	got, ok, err := NewReader(b.js, cluster).Committed(ctx)
	if err != nil || !ok || !reflect.DeepEqual(got, c.Committed()) {
		t.Fatalf("Reader.Committed = %+v, %v, %v; want the replay's %+v", got, ok, err, c.Committed())
	}
}

// A replay yields exactly what was written, in order, from the start or
// from any sequence; Committed is the newest commit with its barrier's
// cuts.
func TestReplayEqualsWritten(t *testing.T) {
	url := testutil.StartNATS(t)
	ctx := testutil.Context(t, time.Minute)
	const cluster = "replay"
	a := newCoordinator(t, url, cluster, "a", 1)
	if _, ok, err := NewReader(a.js, cluster).Committed(ctx); err == nil || ok {
		// No stream yet: an error, not an empty answer.
		t.Fatalf("Committed before the stream exists = %v, %v; want an error", ok, err)
	}
	a.take(t)
	w := a.open(t, cluster, 1)
	if _, ok, err := NewReader(a.js, cluster).Committed(ctx); err != nil || ok {
		t.Fatalf("Committed of an empty log = %v, %v; want nothing", ok, err)
	}
	var written []Record
	add := func(r Record, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, r)
	}
	for e := uint64(1); e <= 30; e++ {
		add(w.Barrier(ctx, e, map[string]uint64{"orders": e * 3, "streamdb.table.t": e}, e%10 == 0))
		if e%2 == 0 { // commits trail barriers by one
			add(w.Commit(ctx, e-1))
			add(w.Commit(ctx, e))
		}
		if e%10 == 0 {
			add(w.Checkpoint(ctx, e/10, e, fmt.Sprintf("%064x", e)))
			add(w.Placement(ctx, e/10))
		}
	}
	add(w.Restore(ctx, 2))
	for i, r := range written {
		if r.Seq != uint64(i+1) || r.Token == 0 {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	got, c := replay(t, a.js, cluster)
	if !reflect.DeepEqual(got, written) {
		t.Fatalf("replay differs from what was written:\n got %+v\nwant %+v", got, written)
	}
	var tail []Record
	if err := NewReader(a.js, cluster).Replay(ctx, 50, func(r Record) error { tail = append(tail, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tail, written[49:]) {
		t.Fatalf("replay from 50: got %d records, want %d", len(tail), len(written[49:]))
	}
	want := Committed{Epoch: 30, Cuts: map[string]uint64{"orders": 90, "streamdb.table.t": 30}, Seq: c.Committed().Seq}
	if !reflect.DeepEqual(c.Committed(), want) {
		t.Fatalf("replay committed %+v; want %+v", c.Committed(), want)
	}
	if rc, ok, err := NewReader(a.js, cluster).Committed(ctx); err != nil || !ok || !reflect.DeepEqual(rc, want) {
		t.Fatalf("Reader.Committed = %+v, %v, %v; want %+v", rc, ok, err, want)
	}
	if n := len(c.Checkpoints()); n != 3 {
		t.Fatalf("%d checkpoints in the replay; want 3", n)
	}

	// A record the reader cannot decode stops the replay: never skipped.
	if _, err := a.js.Publish(ctx, Subject(cluster, KindRestore), []byte(`{"v":1,"kind":"restore","token":1,"id":3,"why":"?"}`)); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := NewReader(a.js, cluster).Replay(ctx, 0, func(Record) error { n++; return nil })
	if err == nil || n != len(written) {
		t.Fatalf("replay over an undecodable record: %d records, err %v; want %d and an error", n, err, len(written))
	}
}
