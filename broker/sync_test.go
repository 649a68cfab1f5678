//go:build linux

package broker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil/cachestat"
)

// dirtyPages returns the page-cache pages of the stream's message blocks
// that are not yet written back (cachestat(2), Linux 6.5+): 0 right after
// an fsync, more than 0 after a write that was not fsynced.
func dirtyPages(t *testing.T, b *Broker, stream string) uint64 {
	t.Helper()
	return cachestat.DirtyPages(t, b.syncer.root, stream)
}

func startTestBroker(t *testing.T) *Broker {
	t.Helper()
	b, err := StartEmbedded("127.0.0.1:-1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func createStream(t *testing.T, b *Broker, name, subject string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := b.JS.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
}

// TestSynchronousCommitFsyncs: with synchronous commit on, every publish
// through JS (sync or async) is reported only once its block is fsynced;
// off, the block keeps dirty pages (the control that shows the check can
// see a write that was not synced).
func TestSynchronousCommitFsyncs(t *testing.T) {
	b := startTestBroker(t)
	if got := b.SyncMode(); got != "OS crash (streamdb fsyncs the embedded JetStream streams)" {
		t.Fatalf("SyncMode = %q at start", got)
	}
	createStream(t, b, "T", "t")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	payload := make([]byte, 200)
	for i := 0; i < 20; i++ {
		if _, err := b.JS.Publish(ctx, "t", payload); err != nil {
			t.Fatal(err)
		}
		if d := dirtyPages(t, b, "T"); d != 0 {
			t.Fatalf("after acknowledged publish %d: %d dirty pages, want 0 (not fsynced)", i, d)
		}
		f, err := b.JS.PublishAsync("t", payload)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		}
		if d := dirtyPages(t, b, "T"); d != 0 {
			t.Fatalf("after acknowledged async publish %d: %d dirty pages, want 0", i, d)
		}
	}

	if w := b.SetSynchronousCommit(false); w != "" {
		t.Fatalf("warning for the embedded server: %s", w)
	}
	if got := b.SyncMode(); got != "process crash only" {
		t.Fatalf("SyncMode = %q with synchronous commit off", got)
	}
	dirty := false
	for i := 0; i < 50 && !dirty; i++ {
		if _, err := b.JS.Publish(ctx, "t", payload); err != nil {
			t.Fatal(err)
		}
		dirty = dirtyPages(t, b, "T") > 0
	}
	if !dirty {
		t.Fatal("with synchronous commit off no dirty page was ever seen: the check cannot tell a synced block from one that is not")
	}

	b.SetSynchronousCommit(true)
	if _, err := b.JS.Publish(ctx, "t", payload); err != nil {
		t.Fatal(err)
	}
	if d := dirtyPages(t, b, "T"); d != 0 {
		t.Fatalf("on again: %d dirty pages after an acknowledged publish", d)
	}
}

// TestSynchronousCommitGroups: concurrent writers share fsyncs, and a
// caller that waits for many async publishes one by one does not pay one
// fsync each.
func TestSynchronousCommitGroups(t *testing.T) {
	b := startTestBroker(t)
	createStream(t, b, "G", "g")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	payload := make([]byte, 200)

	const writers, each = 32, 20
	before := b.syncer.fsyncs.Load()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := b.JS.Publish(ctx, "g", payload); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fsyncs := b.syncer.fsyncs.Load() - before
	t.Logf("%d concurrent publishes: %d fsyncs", writers*each, fsyncs)
	if fsyncs >= writers*each {
		t.Fatalf("%d publishes from %d writers took %d fsyncs: no group commit", writers*each, writers, fsyncs)
	}
	if d := dirtyPages(t, b, "G"); d != 0 {
		t.Fatalf("%d dirty pages after every publish was acknowledged", d)
	}

	const n = 2000
	before = b.syncer.fsyncs.Load()
	futures := make([]jetstream.PubAckFuture, n)
	for i := range futures {
		f, err := b.JS.PublishAsync("g", payload)
		if err != nil {
			t.Fatal(err)
		}
		futures[i] = f
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		}
	}
	fsyncs = b.syncer.fsyncs.Load() - before
	t.Logf("%d async publishes waited one by one: %d fsyncs", n, fsyncs)
	// How many acks one fsync covers depends on the disk's fsync latency
	// against the rate acks arrive, so the bound only tells sharing from
	// none: a future that began waiting only when Ok was called would sync
	// each message alone, about n fsyncs.
	if fsyncs > n/2 {
		t.Fatalf("%d async publishes took %d fsyncs", n, fsyncs)
	}
}

// TestSynchronousCommitRecreatedStream: a stream deleted and made anew
// under the same name restarts its sequences; its writes are still synced.
func TestSynchronousCommitRecreatedStream(t *testing.T) {
	b := startTestBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	payload := make([]byte, 200)
	createStream(t, b, "R", "r")
	for i := 0; i < 50; i++ {
		if _, err := b.JS.Publish(ctx, "r", payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.JS.DeleteStream(ctx, "R"); err != nil {
		t.Fatal(err)
	}
	// The server may still be removing the deleted stream's files; until
	// it is done, making a stream of the same name fails (10049).
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := b.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "R", Subjects: []string{"r"}, Storage: jetstream.FileStorage})
		if err == nil {
			break
		}
		var api *jetstream.APIError
		if !errors.As(err, &api) || api.ErrorCode != errCodeStreamStoreFailed || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // poll interval, under the deadline above
	}
	for i := 0; i < 5; i++ {
		ack, err := b.JS.Publish(ctx, "r", payload)
		if err != nil {
			t.Fatal(err)
		}
		if ack.Sequence != uint64(i+1) {
			t.Fatalf("sequence %d, want %d", ack.Sequence, i+1)
		}
		if d := dirtyPages(t, b, "R"); d != 0 {
			t.Fatalf("recreated stream, publish %d: %d dirty pages", i, d)
		}
	}
}

// TestWaitDurable: a publish through JSUnsynced may leave dirty pages;
// WaitDurable for its sequence syncs them.
func TestWaitDurable(t *testing.T) {
	b := startTestBroker(t)
	createStream(t, b, "W", "w")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sawDirty := false
	for i := 0; i < 50; i++ {
		ack, err := b.JSUnsynced().Publish(ctx, "w", make([]byte, 200))
		if err != nil {
			t.Fatal(err)
		}
		sawDirty = sawDirty || dirtyPages(t, b, "W") > 0
		if err := b.WaitDurable(ack.Stream, ack.Sequence); err != nil {
			t.Fatal(err)
		}
		if d := dirtyPages(t, b, "W"); d != 0 {
			t.Fatalf("after WaitDurable(%d): %d dirty pages", ack.Sequence, d)
		}
	}
	if !sawDirty {
		t.Fatal("JSUnsynced never left a dirty page: it waits for fsync, or the check cannot see one")
	}
}
