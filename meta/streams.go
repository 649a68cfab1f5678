package meta

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/sqlerr"
)

// Streams is what the frontend asks of the JetStream streams behind
// streamdb's streams and tables: the sequences they hold, their messages
// read back in a range, and the JetStream streams that CREATE STREAM and
// CREATE TABLE bind. Every method names its object by the descriptor
// (JSStream and Subject); nothing here changes the catalog. It takes no
// lock.
type Streams struct {
	b *broker.Broker
}

// NewStreams returns the streams of broker b.
func NewStreams(b *broker.Broker) *Streams { return &Streams{b: b} }

// MessageInfo is what a message read back carries besides its data (its
// subject, headers, time and sequence), as exec's decoders fill INCLUDE
// columns from it.
type MessageInfo = broker.MsgInfo

// NotDurableError is a write JetStream stored and acknowledged but could
// not fsync: it is written and visible, yet an OS crash may lose it.
type NotDurableError = broker.NotDurableError

// IsSubjectPattern reports whether subject holds a wildcard (* or >).
func IsSubjectPattern(subject string) bool { return broker.IsPattern(subject) }

// SubjectsCollide reports whether two subjects or patterns match a
// subject in common.
func SubjectsCollide(a, b string) bool { return broker.SubjectsCollide(a, b) }

// RetryRequest runs fn until it succeeds, ctx ends or it fails with an
// error other than no NATS responder yet (a leader still being elected
// after a takeover): each attempt has its own time limit.
func RetryRequest(ctx context.Context, fn func(ctx context.Context) error) error {
	return broker.Retry(ctx, broker.RequestAttempt, fn)
}

// URL is the URL producers publish to.
func (s *Streams) URL() string { return s.b.URL }

// Closed reports whether the connection to NATS is closed for good (the
// server is shutting down).
func (s *Streams) Closed() bool { return s.b.NC.IsClosed() }

// First is the first sequence d's JetStream stream still holds (0 when
// it holds none).
func (s *Streams) First(ctx context.Context, d *catalog.Descriptor) (uint64, error) {
	return s.b.FirstSeq(ctx, d.JSStream)
}

// Last is the last sequence of d's JetStream stream, on any subject.
func (s *Streams) Last(ctx context.Context, d *catalog.Descriptor) (uint64, error) {
	return s.b.LastSeq(ctx, d.JSStream)
}

// LastOnSubject is the last sequence stored on d's subject (0 for none).
func (s *Streams) LastOnSubject(ctx context.Context, d *catalog.Descriptor) (uint64, error) {
	return s.b.LastSeqForSubject(ctx, d.JSStream, d.Subject)
}

// SeqAtTime is the sequence of the first message on d's subject stored
// at or after t (one past the last when there is none).
func (s *Streams) SeqAtTime(ctx context.Context, d *catalog.Descriptor, t time.Time) (uint64, error) {
	return s.b.SeqAtTime(ctx, d.JSStream, d.Subject, t)
}

// MsgTime is the time message seq of d's JetStream stream was stored.
func (s *Streams) MsgTime(ctx context.Context, d *catalog.Descriptor, seq uint64) (time.Time, error) {
	return s.b.MsgTime(ctx, d.JSStream, seq)
}

// Read calls fn with the data of each message on d's subject from
// sequence from to to, in order; an error of fn stops the read and is
// returned. A committed transaction's messages are read in place of its
// reference.
func (s *Streams) Read(ctx context.Context, d *catalog.Descriptor, from, to uint64, fn func(seq uint64, data []byte) error) error {
	return s.b.ReadRange(ctx, d.JSStream, d.Subject, from, to, fn)
}

// ReadInfo is Read giving fn each message's MessageInfo (valid during
// the call only).
func (s *Streams) ReadInfo(ctx context.Context, d *catalog.Descriptor, from, to uint64, fn func(m *MessageInfo, data []byte) error) error {
	return s.b.ReadRangeInfo(ctx, d.JSStream, d.Subject, from, to, fn)
}

// StreamOf is the JetStream stream that holds subject, or "" when none
// does.
func (s *Streams) StreamOf(ctx context.Context, subject string) (string, error) {
	js, err := s.b.JS.StreamNameBySubject(ctx, subject)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return "", nil
	}
	return js, err
}

// SubjectConflictError is a subject pattern whose subjects several
// JetStream streams hold (Streams names them).
type SubjectConflictError = broker.SubjectConflictError

// Bind finds or creates the JetStream stream of a new stream or table
// named sqlName on subject: created says whether this call created it.
// owner, when not "", marks a stream streamdb creates for a table.
func (s *Streams) Bind(ctx context.Context, sqlName, subject, owner string) (name string, created bool, err error) {
	return s.b.EnsureStreamFor(ctx, sqlName, subject, owner)
}

// Disown gives JetStream stream name back to its producers: streamdb no
// longer deletes it with a table.
func (s *Streams) Disown(ctx context.Context, name string) error { return s.b.Disown(ctx, name) }

// Delete deletes JetStream stream name (a CREATE that failed after
// creating it).
func (s *Streams) Delete(ctx context.Context, name string) error { return s.b.DeleteStream(ctx, name) }

// PublishFailure is the error a client gets for a publish that failed
// with err, with the SQLSTATE of its cause (broker.Classify): 53100 when
// the disk is full, 08006 when NATS cannot be reached, 08007 when no
// acknowledgement came (the message may have been stored), and so on.
// what says what was being written ("could not write to table \"t\"").
func (s *Streams) PublishFailure(err error, what string) error {
	if full := s.b.SpaceError(); full != nil {
		// Whatever JetStream said (a timeout from a store that hit the
		// disk's end), the cause is the disk.
		return full
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// The publish's own time limit: no acknowledgement came.
		err = errors.Join(err, nats.ErrTimeout)
	}
	if se := broker.Classify(err, what); se != nil {
		return se
	}
	return sqlerr.New(sqlerr.IOError, "%s: %v", what, err).
		WithHint("Nothing was written; check that JetStream is reachable and has room.")
}
