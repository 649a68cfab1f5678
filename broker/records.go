package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// A record stream keeps one message per subject: the newest record of
// each thing it holds (sequences' reservations). It is streamdb's own and
// never rolled back with the state in Pebble.

// EnsureRecordStream creates (or binds) the JetStream stream name holding
// subjects, keeping the newest message of each subject.
func (b *Broker) EnsureRecordStream(ctx context.Context, name string, subjects string) error {
	_, err := b.JS.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              name,
		Subjects:          []string{subjects},
		Storage:           jetstream.FileStorage,
		MaxMsgsPerSubject: 1,
		Replicas:          max(1, b.replicas),
	})
	if err != nil {
		return fmt.Errorf("create JetStream stream %s: %w", name, err)
	}
	return nil
}

// LastRecord returns the newest message on subject in stream name, or
// found false when there is none.
func (b *Broker) LastRecord(ctx context.Context, name, subject string) (data []byte, found bool, err error) {
	s, err := b.JS.Stream(ctx, name)
	if err != nil {
		return nil, false, fmt.Errorf("JetStream stream %s: %w", name, err)
	}
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", subject, err)
	}
	return m.Data, true, nil
}

// PutRecord publishes a record and returns once JetStream holds it
// (fsynced when synchronous commit is on).
func (b *Broker) PutRecord(ctx context.Context, subject string, data []byte) error {
	if err := b.SpaceError(); err != nil {
		return err
	}
	if _, err := b.JS.Publish(ctx, subject, data); err != nil {
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	return nil
}
