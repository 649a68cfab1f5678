package control

import (
	"errors"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// A Follower hands out the barrier of each committed epoch, in order,
// never one whose commit is not appended yet (it waits for it), skips
// the epochs at or below the caller's, ends past its last epoch, and
// stops at a RESTORE it cannot follow.
func TestFollowerGivesCommittedEpochs(t *testing.T) {
	url := testutil.StartNATS(t)
	const cluster = "follow"
	c := newCoordinator(t, url, cluster, "a", 1)
	c.take(t)
	w := c.open(t, cluster, 1)
	ctx := testutil.Context(t, time.Minute)
	// Epochs 3 and 4 are committed by one commit; 7 is committed alone.
	for _, e := range []uint64{3, 4} {
		if _, err := w.Barrier(ctx, e, map[string]uint64{"s": e * 10}, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Barrier(ctx, 7, map[string]uint64{"s": 70, "t": 5}, false); err != nil {
		t.Fatal(err)
	}

	f, err := NewFollower(c.js, cluster, 9)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	next := func(after uint64) (Record, error) {
		t.Helper()
		return f.Next(testutil.Context(t, 10*time.Second), after)
	}
	for _, want := range []uint64{3, 4} {
		b, err := next(want - 1)
		if err != nil || b.Epoch != want || b.Cuts["s"] != want*10 {
			t.Fatalf("Next: epoch %d cuts %v, %v; want epoch %d", b.Epoch, b.Cuts, err, want)
		}
	}
	// Epoch 7's barrier is appended, its commit is not: Next waits.
	if b, err := f.Next(testutil.Context(t, 300*time.Millisecond), 4); err == nil {
		t.Fatalf("Next returned epoch %d before its commit", b.Epoch)
	}
	// A canceled Next stops the follower's reading; a new one resumes.
	f, _ = NewFollower(c.js, cluster, 9)
	defer f.Close()
	got := make(chan Record, 1)
	errs := make(chan error, 1)
	go func() {
		b, err := f.Next(testutil.Context(t, 30*time.Second), 4)
		got <- b
		errs <- err
	}()
	if _, err := w.Commit(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if b, err := <-got, <-errs; err != nil || b.Epoch != 7 || b.Cuts["t"] != 5 {
		t.Fatalf("Next after 4: epoch %d cuts %v, %v; want epoch 7", b.Epoch, b.Cuts, err)
	}
	// Past the last epoch (9): the end.
	if err := epoch(ctx, w, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := next(7); !errors.Is(err, ErrFollowEnd) {
		t.Fatalf("Next past the last epoch: %v, want ErrFollowEnd", err)
	}
	// A RESTORE stops a follower without an end.
	if _, err := w.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	all, _ := NewFollower(c.js, cluster, 0)
	defer all.Close()
	var last uint64
	for {
		b, err := all.Next(testutil.Context(t, 10*time.Second), last)
		if err != nil {
			if !errors.Is(err, ErrNotFollowed) {
				t.Fatalf("after epoch %d: %v, want ErrNotFollowed", last, err)
			}
			break
		}
		last = b.Epoch
	}
	if last != 10 {
		t.Fatalf("followed up to epoch %d before the RESTORE, want 10", last)
	}
}
