package broker

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// PurgeSubjectBelow deletes the messages on subject in stream whose
// sequence is below keep (keep itself and everything after it stay).
// Messages of other subjects in the stream are not touched.
func (b *Broker) PurgeSubjectBelow(ctx context.Context, stream, subject string, keep uint64) error {
	if keep <= 1 {
		return nil
	}
	s, err := b.JS.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("purge JetStream stream %s: %w", stream, err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(subject), jetstream.WithPurgeSequence(keep)); err != nil {
		return fmt.Errorf("purge subject %q of JetStream stream %s below sequence %d: %w", subject, stream, keep, err)
	}
	return nil
}

// StreamSubjects returns the subjects a JetStream stream holds.
func (b *Broker) StreamSubjects(ctx context.Context, stream string) ([]string, error) {
	s, err := b.JS.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	return s.CachedInfo().Config.Subjects, nil
}

// StreamBytes returns the bytes and message count a JetStream stream
// stores.
func (b *Broker) StreamBytes(ctx context.Context, stream string) (bytes, msgs uint64, err error) {
	st, err := b.state(ctx, stream)
	return st.Bytes, st.Msgs, err
}
