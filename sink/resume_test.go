package sink

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/storage"
	"streamdb/tests/testutil"
)

// TestResumeFillsHoles: a publisher restarted after a crash that left a
// hole in the newest entry (message 2 failed, 3 and 4 stored) reads back
// which of the entry's messages the subject holds, and sends exactly the
// missing ones, though the newest message on the subject is after them.
// Messages of an earlier entry, of another sink and of another subject
// in the same stream do not count.
func TestResumeFillsHoles(t *testing.T) {
	_, js := testutil.JetStream(t, testutil.StartNATS(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SINKS", Subjects: []string{"out.>"}}); err != nil {
		t.Fatal(err)
	}
	d := &storage.SinkDescriptor{ID: 4, Name: "s", Subject: "out.a", JSStream: "SINKS", CreatedAt: time.Unix(1700000000, 0)}
	other := &storage.SinkDescriptor{ID: 5, CreatedAt: time.Unix(1700000000, 0)}
	put := func(subject, id string) {
		t.Helper()
		m := nats.NewMsg(subject)
		m.Data = []byte("{}")
		m.Header.Set(jetstream.MsgIDHeader, id)
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	put("out.a", msgID(d.UID(), 7, 0, 0)) // an earlier entry, whole
	put("out.a", msgID(d.UID(), 7, 0, 1))
	put("out.a", msgID(d.UID(), 8, 1, 0)) // entry (8, 1): 0, 1, 3, 4 stored, 2 failed
	put("out.b", msgID(d.UID(), 8, 1, 2)) // another subject of the stream
	put("out.a", msgID(d.UID(), 8, 1, 1))
	put("out.a", msgID(other.UID(), 8, 1, 2)) // another sink's
	put("out.a", msgID(d.UID(), 8, 1, 3))
	put("out.a", msgID(d.UID(), 8, 1, 4))

	p := &Publisher{js: js}
	last, has, stored, err := p.lastPublished(ctx, d)
	if err != nil || !has || last != (position{epoch: 8, part: 1, index: 4}) {
		t.Fatalf("lastPublished = %v, %v, %v", last, has, err)
	}
	st := &state{last: last, has: has, partial: stored, partialAt: position{epoch: 8, part: 1}}
	if got := st.toPublish(entry{epoch: 8, part: 1}, 6); !slices.Equal(got, []int{2, 5}) {
		t.Fatalf("to publish after the restart: %v, want [2 5] (stored: %v)", got, stored)
	}
	if got := st.toPublish(entry{epoch: 9, part: 0}, 2); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("the next entry: %v, want [0 1]", got)
	}
}
