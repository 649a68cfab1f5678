package meta

import (
	"context"
	"log/slog"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sink"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// A sink's descriptor lives in Pebble under a key space of its own
// (storage.SinkDescriptor), beside its outbox: the view's changes per
// epoch that the publisher (package sink) sends to the sink's subject.
// Sinks creates and deletes descriptors, tells the runtime which views
// write an outbox, and reads the outboxes' lag; the statements (CREATE
// and DROP SINK, their options and privileges, SHOW SINKS) are sql's.

// SinkOpHeader is the message header in which a protobuf or avro sink
// publishes each change's op (+ or -).
const SinkOpHeader = sink.OpHeader

// CheckSinkSchema checks that a sink in format (protobuf or avro) can
// encode rows of cols with schema (a compiled FileDescriptorSet or an
// Avro schema) and, for protobuf, message (the full name of the message
// type): the encoder the publisher will build. Its errors name the
// column or field to change.
func CheckSinkSchema(format string, schema []byte, message string, cols []types.Column) error {
	_, err := sink.NewRowEncoder(format, schema, message, cols)
	return err
}

// SinkRuntime is the dataflow runtime as sinks use it (*exec.Runtime):
// the running pipeline of a view writes the outbox of each of its sinks.
type SinkRuntime interface {
	AddSink(viewID, sinkID uint32)
	RemoveSink(viewID, sinkID uint32)
}

// SinksConfig is what the sinks work on: one node's components.
type SinksConfig struct {
	Store *storage.Store
	// Broker finds or creates the JetStream stream of a sink's subject.
	Broker  *broker.Broker
	Runtime SinkRuntime
	Log     *slog.Logger
}

// Sinks is one server's sinks as stored. Its methods take no lock:
// callers that change sinks hold the catalog lock (sql's ddlMu), so that
// a name or subject checked free stays free until the sink is stored.
type Sinks struct {
	cfg SinksConfig
}

// NewSinks returns the sinks stored in cfg.Store.
func NewSinks(cfg SinksConfig) *Sinks { return &Sinks{cfg: cfg} }

// SinkDescriptor is a sink as stored beside its outbox.
type SinkDescriptor = storage.SinkDescriptor

// List returns every sink, ordered by name.
func (s *Sinks) List() ([]*storage.SinkDescriptor, error) {
	return storage.Sinks(s.cfg.Store.DB())
}

// Named returns the sink called name, or nil when there is none.
func (s *Sinks) Named(name string) (*storage.SinkDescriptor, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, d := range all {
		if d.Name == name {
			return d, nil
		}
	}
	return nil, nil
}

// On returns the sinks that read any of views (matched by id and name:
// ids come back after a rollback).
func (s *Sinks) On(views []*catalog.Descriptor) ([]*storage.SinkDescriptor, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []*storage.SinkDescriptor
	for _, d := range all {
		for _, v := range views {
			if d.ViewID == v.ID && d.View == v.Name {
				out = append(out, d)
				break
			}
		}
	}
	return out, nil
}

// CheckFree returns the sink called name when there is one; otherwise it
// fails (42710) when subject is already another sink's subject, since
// each sink publishes to a subject of its own.
func (s *Sinks) CheckFree(name, subject string) (*storage.SinkDescriptor, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, d := range all {
		if d.Name == name {
			return d, nil
		}
		if d.Subject == subject {
			return nil, sqlerr.New(sqlerr.DuplicateObject, "subject %q is already the subject of sink %s", subject, d.Name).
				WithHint("Each sink publishes to a subject of its own; choose another subject.")
		}
	}
	return nil, nil
}

// NewSink is a sink that CREATE SINK bound and checked.
type NewSink struct {
	Name  string
	Owner string
	// View is the view or table the sink reads; KeyCols its unique key
	// (nil when it has none).
	View    *catalog.Descriptor
	KeyCols []int
	Subject string
	// Format and Envelope are checked values (json, protobuf or avro;
	// changelog, upsert or debezium); Schema and Message are those of
	// format protobuf or avro, nil and empty for json.
	Format   string
	Envelope string
	Schema   []byte
	Message  string
}

// Create stores sink n, with the JetStream stream that holds its
// subject found or created, and has its view's pipeline write its
// outbox. The caller holds the catalog lock and checked n (CheckFree).
func (s *Sinks) Create(ctx context.Context, n NewSink) (*storage.SinkDescriptor, error) {
	js, err := s.cfg.Broker.EnsureStream(ctx, "sink_"+n.Name, n.Subject)
	if err != nil {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot find or create a JetStream stream for subject %q: %v", n.Subject, err).
			WithHint("Check that NATS is reachable, or create a JetStream stream that holds the subject.")
	}
	store := s.cfg.Store
	b := store.NewBatch()
	defer b.Close()
	id, err := store.NextObjectID(b)
	if err != nil {
		return nil, err
	}
	d := &storage.SinkDescriptor{ID: id, Name: n.Name, CreatedAt: time.Now().UTC(), Owner: n.Owner,
		View: n.View.Name, ViewID: n.View.ID, KeyCols: n.KeyCols, Subject: n.Subject, JSStream: js,
		Format: n.Format, Envelope: n.Envelope, Schema: n.Schema, Message: n.Message}
	if err := storage.PutSink(b, d); err != nil {
		return nil, err
	}
	if err := store.Commit(b, true); err != nil {
		return nil, err
	}
	s.cfg.Runtime.AddSink(d.ViewID, d.ID)
	s.cfg.Log.Info("created sink", "sink", d.Name, "view", d.View, "subject", d.Subject, "jetstream_stream", js, "envelope", d.Envelope)
	return d, nil
}

// Delete removes sink d and its outbox; its subject and what it
// published stay in JetStream. The caller holds the catalog lock.
func (s *Sinks) Delete(d *storage.SinkDescriptor) error {
	s.cfg.Runtime.RemoveSink(d.ViewID, d.ID)
	b := s.cfg.Store.NewBatch()
	defer b.Close()
	if err := storage.DeleteSink(b, d); err != nil {
		return err
	}
	if err := s.cfg.Store.Commit(b, true); err != nil {
		return err
	}
	s.cfg.Log.Info("dropped sink", "sink", d.Name)
	return nil
}

// SinkLag is a sink with what it has not published yet: the outbox
// entries committed but not acknowledged by JetStream (epochs, a
// snapshot not yet published counting as one) and the row changes in
// them.
type SinkLag struct {
	Sink    *storage.SinkDescriptor
	Epochs  int64
	Changes int64
}

// Lag returns every sink, ordered by name, with its lag, all read from
// one snapshot.
func (s *Sinks) Lag() ([]SinkLag, error) {
	snap := s.cfg.Store.Snapshot()
	defer snap.Close()
	all, err := storage.Sinks(snap)
	if err != nil {
		return nil, err
	}
	out := make([]SinkLag, 0, len(all))
	for _, d := range all {
		l := SinkLag{Sink: d}
		err := storage.ScanPrefix(snap, storage.OutboxPrefix(d.ID), func(_, v []byte) error {
			_, n := exec.OutboxEntryInfo(v)
			l.Epochs++
			l.Changes += int64(n)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}
