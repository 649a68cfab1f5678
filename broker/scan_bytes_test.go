package broker

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestReadRangeOfLargeMessagesStaysUnderMaxPending reads 100 messages of
// 900 KiB from a server that drops a client holding more than 8 MiB
// pending as a slow consumer: every message is read, and the connection
// never drops. (A read that pulled 256 messages at once was dropped and
// ended as if the messages had run out, having read none of them.)
func TestReadRangeOfLargeMessagesStaysUnderMaxPending(t *testing.T) {
	embeddedMaxPending = 8 << 20
	b := startTestBroker(t)
	embeddedMaxPending = 0
	createStream(t, b, "BIG", "big")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const n = 100
	futures := make([]jetstream.PubAckFuture, n)
	for i := range futures {
		payload := make([]byte, 900<<10)
		payload[0] = byte(i)
		f, err := b.JS.PublishAsync("big", payload)
		if err != nil {
			t.Fatal(err)
		}
		futures[i] = f
	}
	for i, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatalf("publish %d: %v", i, err)
		case <-ctx.Done():
			t.Fatalf("publish %d: no acknowledgement", i)
		}
	}
	got := 0
	err := b.ReadRange(ctx, "BIG", "big", 1, n, func(seq uint64, data []byte) error {
		if want := uint64(got + 1); seq != want || data[0] != byte(got) {
			t.Fatalf("message %d: sequence %d, first byte %d", want, seq, data[0])
		}
		got++
		return nil
	})
	if err != nil || got != n {
		t.Fatalf("read %d of %d messages: %v", got, n, err)
	}
	if r := b.NC.Stats().Reconnects; r > 0 {
		t.Fatalf("the connection to NATS dropped %d times during the read", r)
	}
}
