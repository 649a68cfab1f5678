package testutil

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStream connects to the NATS server at url (reconnecting for as long
// as the test runs, so a restarted server is found again) and returns its
// connection and JetStream context; the connection closes with the test.
// Asynchronous publishes may have up to 4096 acknowledgements pending.
func JetStream(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.Timeout(10*time.Second), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatalf("connecting to NATS at %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// Publish publishes each message to subject and waits for its
// acknowledgement, so that it is stored before the test's next step.
func Publish(t testing.TB, js jetstream.JetStream, subject string, msgs ...string) {
	t.Helper()
	ctx := Context(t, time.Minute)
	for _, m := range msgs {
		if _, err := js.Publish(ctx, subject, []byte(m)); err != nil {
			t.Fatalf("publishing %q to %s: %v", m, subject, err)
		}
	}
}
