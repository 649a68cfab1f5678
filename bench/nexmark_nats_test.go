package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/exec"
)

// natsJS connects to NATS and opens JetStream.
func natsJS(b *testing.B, url string) (*nats.Conn, jetstream.JetStream) {
	b.Helper()
	nc, err := nats.Connect(url, nats.Name("streamdb-bench-reader"))
	if err != nil {
		b.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		b.Fatal(err)
	}
	return nc, js
}

// readOrdered reads want messages of subject from the start of its
// JetStream stream with an ordered consumer, touching only their length.
// It pulls as streamdb's source readers do.
func readOrdered(ctx context.Context, js jetstream.JetStream, subject string, want uint64, bytes *atomic.Int64) error {
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return fmt.Errorf("stream of %s: %w", subject, err)
	}
	cons, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return err
	}
	if want == 0 {
		return nil
	}
	var got atomic.Uint64
	var size int64
	done := make(chan struct{})
	cc, err := cons.Consume(func(m jetstream.Msg) {
		size += int64(len(m.Data()))
		if got.Add(1) == want {
			close(done)
		}
	}, exec.ConsumeOptions()...) // the pull settings of streamdb's own readers
	if err != nil {
		return err
	}
	defer cc.Stop()
	select {
	case <-done:
		bytes.Add(size)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: read %d of %d messages: %w", subject, got.Load(), want, ctx.Err())
	}
}
