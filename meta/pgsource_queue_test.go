package meta

import (
	"context"
	"testing"
	"time"
)

// TestChangeQueueBounds checks that the queue between the stream's reader
// and the applier holds the reader back by changes, not transactions,
// and still takes a transaction larger than its limit when empty.
func TestChangeQueueBounds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := newChangeQueue(100)
	if !q.acquire(ctx, 60) || !q.acquire(ctx, 40) {
		t.Fatal("changes within the limit were held back")
	}
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if q.acquire(short, 1) {
		t.Fatal("a full queue took one more change")
	}
	got := make(chan bool, 1)
	go func() { got <- q.acquire(ctx, 30) }()
	q.release(60)
	if !<-got {
		t.Fatal("the reader was not let go after the applier made room")
	}
	q.release(70)
	// A transaction over the limit goes into an empty queue whole.
	if !q.acquire(ctx, 1000) {
		t.Fatal("an empty queue refused a transaction larger than its limit")
	}
}
