package nexmark

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// streamMsgs returns how many messages the stream of subject holds.
func streamMsgs(t *testing.T, js jetstream.JetStream, subject string) uint64 {
	t.Helper()
	st, err := streamState(t.Context(), js, subject)
	if err != nil {
		t.Fatal(err)
	}
	return st.Msgs
}

func connectJS(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestPublishEveryEvent publishes with and without acknowledgements and
// counts what each stream stored.
func TestPublishEveryEvent(t *testing.T) {
	url := testutil.StartNATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := EnsureStreams(ctx, url, DefaultSubjects); err != nil {
		t.Fatal(err)
	}
	js := connectJS(t, url)
	const events = 5000
	g := NewGenerator(Config{Seed: 3})
	for i, noAck := range []bool{false, true} {
		st, err := Publish(ctx, url, g, PublishOptions{First: uint64(i * events), Events: events, NoAck: noAck})
		if err != nil {
			t.Fatalf("NoAck=%v: %v", noAck, err)
		}
		for k, subject := range DefaultSubjects {
			want := uint64(i+1) * Count(Kind(k), events)
			if st.Events[k] != Count(Kind(k), events) {
				t.Errorf("NoAck=%v: sent %d %v events, want %d", noAck, st.Events[k], Kind(k), Count(Kind(k), events))
			}
			if got := streamMsgs(t, js, subject); got != want {
				t.Errorf("NoAck=%v: stream of %s holds %d messages, want %d", noAck, subject, got, want)
			}
		}
	}
}

// TestPublishNoAckReportsLoss: a stream that refuses messages (full, with
// the discard-new policy) makes an unacknowledged Publish fail.
func TestPublishNoAckReportsLoss(t *testing.T) {
	url := testutil.StartNATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := connectJS(t, url)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "small", Subjects: []string{"small.bid"}, MaxMsgs: 10, Discard: jetstream.DiscardNew,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "large", Subjects: []string{"large.>"}}); err != nil {
		t.Fatal(err)
	}
	subjects := [3]string{"large.person", "large.auction", "small.bid"}
	_, err := Publish(ctx, url, NewGenerator(Config{Seed: 3}), PublishOptions{Subjects: subjects, Events: 100, NoAck: true})
	if err == nil || !strings.Contains(err.Error(), "small.bid: the stream stored 10 of the 92 events") {
		t.Fatalf("err = %v, want the stream's shortfall", err)
	}
}
