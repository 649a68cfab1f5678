package sql

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/storage"
	"streamdb/storage/keyenc"
)

// The node of a fakeEngine: what ad-hoc reads and table commits need
// (engineHost, natsLink, the state store, the runtime, JetStream) without
// a server. The store is a real Pebble in memory and the runtime a real
// exec.Runtime that runs no dataflow. JetStream is fakeJetStream: it
// acknowledges a table's changelog message at once and applies it to the
// table's state in the store as the table's dataflow would (a keyed
// table by its primary key, one without by row with a multiplicity), with
// the table's position, so that the next read sees it (and the table's
// log forgets it as the real one does once the dataflow applied it).

// fakeHost is the node's engineHost: an unbounded query memory pool, a
// fence that holds unless fenced is set, and every setting at its default
// (the empty string, which readers of settings take for their default).
type fakeHost struct {
	pool   exec.MemoryPool
	fenced error
}

func (h *fakeHost) QueryPool() *exec.MemoryPool { return &h.pool }
func (h *fakeHost) CheckFence() error           { return h.fenced }
func (h *fakeHost) Setting(string) string       { return "" }

// fakeLink is a NATS connection that is up and takes messages of 1 MiB.
type fakeLink struct{}

func (fakeLink) Connected() bool   { return true }
func (fakeLink) MaxPayload() int64 { return 1 << 20 }

// fakeJetStream publishes tables' changelog messages (see above), keeps
// the newest message of every other subject a stream holds (sequences'
// records, a stream's input), and makes, updates, lists and deletes
// streams (DDL). Any other JetStream call panics (the embedded interface
// is nil): the fake engine has no consumers, so no dataflow runs.
type fakeJetStream struct {
	jetstream.JetStream
	e *Engine

	mu sync.Mutex
	// streams are the JetStream streams by name.
	streams map[string]jetstream.StreamConfig
	// records holds the newest message of each subject that is neither a
	// table's nor the transaction stream's.
	records map[string][]byte
	// seq is the sequence of the last message, one sequence for all
	// subjects as in one JetStream stream per table; last is that of the
	// last message per subject.
	seq  uint64
	last map[string]uint64
	// txn holds the transaction stream's messages by sequence.
	txn map[uint64][]byte
	// fail, when set, is the error the next publish returns (and clears)
	// after storing nothing.
	fail error
}

// Publish applies a table's changelog message, or keeps a message of the
// transaction stream, and acknowledges it.
func (js *fakeJetStream) Publish(_ context.Context, subject string, data []byte, _ ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.publishLocked(subject, data)
}

func (js *fakeJetStream) publishLocked(subject string, data []byte) (*jetstream.PubAck, error) {
	if err := js.fail; err != nil {
		js.fail = nil
		return nil, err
	}
	if strings.HasPrefix(subject, fakeTxnPrefix) {
		js.seq++
		if js.txn == nil {
			js.txn = map[uint64][]byte{}
		}
		js.txn[js.seq] = data
		return &jetstream.PubAck{Stream: broker.TxnStream, Sequence: js.seq}, nil
	}
	d := js.tableOn(subject)
	if d == nil {
		name := js.streamOf(subject)
		if name == "" {
			return nil, fmt.Errorf("fake JetStream: no stream holds subject %q", subject)
		}
		js.seq++
		if js.records == nil {
			js.records = map[string][]byte{}
		}
		js.records[subject] = append([]byte(nil), data...)
		js.noteLast(subject)
		return &jetstream.PubAck{Stream: name, Sequence: js.seq}, nil
	}
	js.seq++
	if err := applyChangelog(js.e.store, d, data, js.seq); err != nil {
		return nil, err
	}
	js.noteLast(subject)
	return &jetstream.PubAck{Stream: d.JSStream, Sequence: js.seq}, nil
}

func (js *fakeJetStream) noteLast(subject string) {
	if js.last == nil {
		js.last = map[string]uint64{}
	}
	js.last[subject] = js.seq
}

// PublishAsync publishes as Publish does; the acknowledgement is ready.
func (js *fakeJetStream) PublishAsync(subject string, data []byte, _ ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	return readyAck(js.publishLocked(subject, data))
}

// PublishMsgAsync takes a transaction's reference message on a table's
// subject: the table applies the transaction's data it names, at the
// reference's sequence. (The fake's transactions always commit: their
// decision is recorded, never consulted.)
func (js *fakeJetStream) PublishMsgAsync(m *nats.Msg, _ ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	ref, ok, err := broker.ParseTxnRef(m.Header, m.Data)
	if err != nil || !ok {
		return nil, fmt.Errorf("fake JetStream: %s is not a transaction reference (%v)", m.Subject, err)
	}
	d := js.tableOn(m.Subject)
	if d == nil {
		return nil, fmt.Errorf("fake JetStream: no table on subject %q", m.Subject)
	}
	js.seq++
	for _, r := range ref.Data {
		for seq := r[0]; seq <= r[1]; seq++ {
			if err := applyChangelog(js.e.store, d, js.txn[seq], js.seq); err != nil {
				return nil, err
			}
		}
	}
	js.noteLast(m.Subject)
	return readyAck(&jetstream.PubAck{Stream: d.JSStream, Sequence: js.seq}, nil)
}

// fakeTxnPrefix begins the subjects of the transaction stream.
var fakeTxnPrefix = strings.TrimSuffix(broker.TxnIntentSubject(""), ".intent")

// fakeAck is an acknowledgement that is there at once.
type fakeAck struct {
	jetstream.PubAckFuture
	ok  chan *jetstream.PubAck
	err chan error
}

func readyAck(ack *jetstream.PubAck, err error) (jetstream.PubAckFuture, error) {
	f := &fakeAck{ok: make(chan *jetstream.PubAck, 1), err: make(chan error, 1)}
	if err != nil {
		f.err <- err
	} else {
		f.ok <- ack
	}
	return f, nil
}

func (f *fakeAck) Ok() <-chan *jetstream.PubAck { return f.ok }
func (f *fakeAck) Err() <-chan error            { return f.err }

// Stream answers for a stream's configuration, state and the last
// message on one of its subjects.
func (js *fakeJetStream) Stream(_ context.Context, name string) (jetstream.Stream, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if _, ok := js.streams[name]; !ok {
		return nil, jetstream.ErrStreamNotFound
	}
	return &fakeStream{js: js, name: name}, nil
}

// addStream registers a stream; the caller holds mu.
func (js *fakeJetStream) addStream(cfg jetstream.StreamConfig) {
	if js.streams == nil {
		js.streams = map[string]jetstream.StreamConfig{}
	}
	js.streams[cfg.Name] = cfg
}

// streamOf returns the stream holding subject, or ""; the caller holds mu.
func (js *fakeJetStream) streamOf(subject string) string {
	for name, cfg := range js.streams {
		for _, s := range cfg.Subjects {
			if broker.SubjectsCollide(s, subject) {
				return name
			}
		}
	}
	return ""
}

func (js *fakeJetStream) CreateStream(_ context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if _, ok := js.streams[cfg.Name]; ok {
		return nil, jetstream.ErrStreamNameAlreadyInUse
	}
	js.addStream(cfg)
	return &fakeStream{js: js, name: cfg.Name}, nil
}

func (js *fakeJetStream) UpdateStream(_ context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if _, ok := js.streams[cfg.Name]; !ok {
		return nil, jetstream.ErrStreamNotFound
	}
	js.addStream(cfg)
	return &fakeStream{js: js, name: cfg.Name}, nil
}

func (js *fakeJetStream) CreateOrUpdateStream(_ context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.addStream(cfg)
	return &fakeStream{js: js, name: cfg.Name}, nil
}

func (js *fakeJetStream) DeleteStream(_ context.Context, name string) error {
	js.mu.Lock()
	defer js.mu.Unlock()
	if _, ok := js.streams[name]; !ok {
		return jetstream.ErrStreamNotFound
	}
	delete(js.streams, name)
	return nil
}

func (js *fakeJetStream) StreamNameBySubject(_ context.Context, subject string) (string, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if name := js.streamOf(subject); name != "" {
		return name, nil
	}
	return "", jetstream.ErrStreamNotFound
}

func (js *fakeJetStream) ListStreams(context.Context, ...jetstream.StreamListOpt) jetstream.StreamInfoLister {
	js.mu.Lock()
	defer js.mu.Unlock()
	l := &fakeStreamLister{ch: make(chan *jetstream.StreamInfo, len(js.streams))}
	for _, cfg := range js.streams {
		l.ch <- &jetstream.StreamInfo{Config: cfg}
	}
	close(l.ch)
	return l
}

type fakeStreamLister struct{ ch chan *jetstream.StreamInfo }

func (l *fakeStreamLister) Info() <-chan *jetstream.StreamInfo { return l.ch }
func (l *fakeStreamLister) Err() error                         { return nil }

func (js *fakeJetStream) tableOn(subject string) *catalog.Descriptor {
	js.e.catMu.RLock()
	defer js.e.catMu.RUnlock()
	for _, d := range js.e.objs {
		if d.Kind == catalog.KindTable && d.Subject == subject {
			return d
		}
	}
	return nil
}

type fakeStream struct {
	jetstream.Stream
	js   *fakeJetStream
	name string
}

// info is the stream's configuration and state (its last sequence is
// that of the newest message on its subjects); the caller holds js.mu.
func (s *fakeStream) info() *jetstream.StreamInfo {
	cfg := s.js.streams[s.name]
	var last uint64
	for subj, seq := range s.js.last {
		for _, p := range cfg.Subjects {
			if broker.SubjectsCollide(p, subj) {
				last = max(last, seq)
			}
		}
	}
	return &jetstream.StreamInfo{Config: cfg, State: jetstream.StreamState{FirstSeq: 1, LastSeq: last}}
}

func (s *fakeStream) Info(context.Context, ...jetstream.StreamInfoOpt) (*jetstream.StreamInfo, error) {
	s.js.mu.Lock()
	defer s.js.mu.Unlock()
	return s.info(), nil
}

func (s *fakeStream) CachedInfo() *jetstream.StreamInfo {
	s.js.mu.Lock()
	defer s.js.mu.Unlock()
	return s.info()
}

// Purge forgets nothing: the fake keeps every transaction's messages.
func (s *fakeStream) Purge(context.Context, ...jetstream.StreamPurgeOpt) error { return nil }

func (s *fakeStream) GetLastMsgForSubject(_ context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	s.js.mu.Lock()
	defer s.js.mu.Unlock()
	seq := s.js.last[subject]
	if seq == 0 {
		return nil, jetstream.ErrMsgNotFound
	}
	return &jetstream.RawStreamMsg{Subject: subject, Sequence: seq, Data: s.js.records[subject]}, nil
}

// applyChangelog applies one changelog message of table d, stored at seq,
// to the table's state: the rows as exec's materialize operator keeps a
// table's (keyed by the primary key, or by the whole row with its
// multiplicity), and the table's position.
func applyChangelog(store *storage.Store, d *catalog.Descriptor, data []byte, seq uint64) error {
	cols, err := d.Schema()
	if err != nil {
		return err
	}
	changes, err := exec.NewChangelogDecoder(memberColumns(d, cols)).Decode(data)
	if err != nil {
		return err
	}
	scan, err := tableScan(d)
	if err != nil {
		return err
	}
	key := exec.TableKey(scan)
	prefix := exec.ViewTablePrefix(d.ID)
	b := store.DB().NewIndexedBatch()
	defer b.Close()
	for _, ch := range changes {
		k := append([]byte(nil), prefix...)
		if key != nil {
			for _, j := range key {
				k = keyenc.Append(k, ch.Row[j])
			}
			if ch.Sign > 0 {
				err = b.Set(k, exec.EncodeViewValue(ch.Row, 1), nil)
			} else {
				err = b.Delete(k, nil)
			}
		} else {
			k = keyenc.AppendRowValue(k, ch.Row)
			var n uint64
			if v, closer, gerr := b.Get(k); gerr == nil {
				n, _ = binary.Uvarint(v)
				closer.Close()
			}
			switch {
			case ch.Sign > 0:
				err = b.Set(k, exec.EncodeViewValue(ch.Row, n+1), nil)
			case n > 1:
				err = b.Set(k, exec.EncodeViewValue(ch.Row, n-1), nil)
			default:
				err = b.Delete(k, nil)
			}
		}
		if err != nil {
			return err
		}
	}
	if err := storage.PutPosition(b, d.ID, 0, storage.SourcePosition{Seq: seq}); err != nil {
		return err
	}
	return b.Commit(nil)
}

// openFakeNode gives e a node of fakes (see above).
func openFakeNode(t *testing.T, e *Engine) *fakeJetStream {
	t.Helper()
	store, err := storage.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	js := &fakeJetStream{e: e}
	log := slog.New(slog.DiscardHandler)
	e.store = store
	// A connection that is not closed: the collector of dropped tables'
	// streams runs while it is open.
	e.broker = &broker.Broker{JS: js, NC: &nats.Conn{}}
	e.streams = meta.NewStreams(e.broker)
	e.state = meta.NewState(store)
	e.rt = exec.NewRuntime(store, e.broker, log, time.Second)
	e.host = &fakeHost{}
	e.link = fakeLink{}
	e.log = log
	e.node = &fakeNode{e: e, dataDir: t.TempDir(), schemaDir: t.TempDir()}
	e.coord = &fakeCoordinator{}
	e.cat = meta.NewCatalog(meta.CatalogConfig{Store: store, Broker: e.broker, Log: log})
	e.seqs = meta.NewSequences(e.broker, log)
	e.points = meta.NewPoints(meta.PointsConfig{Coord: e.coord, Settings: e.node.CheckpointSettings, Broker: e.broker, Log: log})
	e.dropped = e.newDroppedStreams()
	e.tables = e.newTables()
	e.jobs = meta.NewJobs(e.rt.Positions)
	e.sinkStore = meta.NewSinks(meta.SinksConfig{Store: store, Broker: e.broker, Runtime: e.rt, Log: log})
	e.ddl = e.newDDL(e.node)
	e.pgSources = meta.NewPGSources(meta.PGSourcesConfig{Host: pgSourceHost{e}, DDL: e.ddl, Log: log})
	if err := e.openSecrets(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// DDL holds ddlMu throughout; the dropped streams' collector
		// takes it too, so it finds the engine whole or not at all.
		e.ddlMu.Lock()
		defer e.ddlMu.Unlock()
		e.rt.Close()
		store.Close()
	})
	return js
}

// create adds a CREATE STREAM, TABLE or MATERIALIZED VIEW to the catalog
// (OfflineCatalog), giving a table the constraints, subject and JetStream
// stream CREATE TABLE would, and storing it (meta.Catalog, which gives it
// its id) so that DDL sees it as it sees what DDL made.
func (f *fakeEngine) create(stmt string) error {
	before := map[string]bool{}
	for name := range f.objs {
		before[name] = true
	}
	if err := f.cat.Exec(stmt); err != nil {
		return err
	}
	st, err := front.Parse(stmt)
	if err != nil {
		return err
	}
	if n, ok := st.Node.(*front.CreateSource); ok {
		d := f.objs[n.Name]
		if d.Constraints, err = f.constraintDefs(n, d); err != nil {
			delete(f.objs, n.Name)
			return err
		}
		d.Indexes, _ = constraintIndexes(d)
	}
	for name, d := range f.objs {
		if before[name] {
			continue
		}
		if d.Kind == catalog.KindTable && d.Subject == "" {
			d.Subject = tableSubjectPrefix + name
			d.JSStream = "STREAMDB_TABLE_" + name
		}
		if d.Subject != "" {
			f.js.mu.Lock()
			if d.JSStream == "" {
				d.JSStream = "STREAMDB_" + name
			}
			if _, ok := f.js.streams[d.JSStream]; !ok {
				f.js.addStream(jetstream.StreamConfig{Name: d.JSStream, Subjects: []string{d.Subject}})
			}
			f.js.mu.Unlock()
		}
		if err := f.Engine.cat.Create(d); err != nil {
			return err
		}
	}
	return nil
}

// OrderedConsumer gives a dataflow's reader a consumer that delivers
// nothing: a dataflow that starts (ALTER TABLE restarts every one) idles,
// and the fake JetStream applies tables' changes itself.
func (js *fakeJetStream) OrderedConsumer(context.Context, string, jetstream.OrderedConsumerConfig) (jetstream.Consumer, error) {
	return fakeConsumer{}, nil
}

type fakeConsumer struct{ jetstream.Consumer }

func (fakeConsumer) Consume(jetstream.MessageHandler, ...jetstream.PullConsumeOpt) (jetstream.ConsumeContext, error) {
	return fakeConsumeContext{}, nil
}
func (fakeConsumer) CachedInfo() *jetstream.ConsumerInfo { return nil }

type fakeConsumeContext struct{ jetstream.ConsumeContext }

func (fakeConsumeContext) Stop() {}
