package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Synchronous commit: what an acknowledged write survives.
//
// The embedded NATS server keeps JetStream's default sync_interval: it
// writes every message to its file before acknowledging it (so it survives
// kill -9 of the process) but fsyncs only every two minutes (so an OS crash
// or power cut can lose what it acknowledged). Its server-wide alternative,
// sync_interval "always", fsyncs every message one by one, which cuts
// producers' async publishing by orders of magnitude (bench/natssync_test.go
// measures it) and would end streamdb as a stream ingester; JetStream's
// per-stream opt-out of it (PersistMode async) acknowledges before the
// write reaches the OS, weaker than the default.
//
// So the server keeps its setting, and streamdb makes its own writes
// durable: with synchronous commit on (the default), a publish made
// through Broker.JS (every INSERT, UPDATE, DELETE and COMMIT over SQL) is
// reported acknowledged only once the JetStream stream's files are fsynced
// up to at least that message. Concurrent writers share fsyncs (group
// commit): one fsync covers every message the stream holds when it starts.
// Producers that publish to JetStream directly get NATS's acknowledgement
// and its sync_interval. With an external NATS server (--nats-url) streamdb
// cannot fsync the server's files; it checks whether the server syncs every
// write and warns when it cannot tell that it does.

// syncer makes the embedded server's streams durable on request.
type syncer struct {
	on   atomic.Bool
	root string // <store>/jetstream/<account>/streams
	// above are the directories from root's parent up to the one holding
	// <store> (the data directory). The server creates them without
	// fsyncing their entries, so until each is fsynced once a power cut
	// may take the whole store, every stream in it.
	above []string

	mu      sync.Mutex
	streams map[string]*streamSync

	// fsyncs counts fsync calls, for tests.
	fsyncs atomic.Int64
}

// streamSync is the durability state of one JetStream stream.
type streamSync struct {
	name string
	mu   sync.Mutex
	cond *sync.Cond
	// want is the highest acknowledged sequence a writer waits for;
	// durable the highest known to be fsynced.
	want, durable uint64
	running       bool
	// ident is the stream's meta.inf when durable was reached: a stream
	// deleted and made anew under the same name (whose sequences start
	// over) has another.
	ident os.FileInfo
	// failed is sticky: after a failed fsync the state of the file is
	// unknown (PostgreSQL stops the server), so every later write fails.
	failed error

	// Owned by the one running sync (running set).
	primed  bool // stream directory and metadata synced once
	lastBlk int  // highest message block index synced
}

func newSyncer(ns *server.Server) *syncer {
	jsDir := ns.JetStreamConfig().StoreDir // <store>/jetstream
	root := filepath.Join(jsDir, ns.GlobalAccount().Name, "streams")
	var above []string
	for d, top := filepath.Dir(root), filepath.Dir(filepath.Dir(jsDir)); ; d = filepath.Dir(d) {
		above = append(above, d)
		if d == top || d == filepath.Dir(d) {
			break
		}
	}
	return &syncer{root: root, above: above, streams: map[string]*streamSync{}}
}

func (s *syncer) stream(name string) *streamSync {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.streams[name]
	if !ok {
		ss = &streamSync{name: name}
		ss.cond = sync.NewCond(&ss.mu)
		s.streams[name] = ss
	}
	return ss
}

// forget drops what is known of a deleted stream, so that a new stream of
// the same name starts from sequence 0.
func (s *syncer) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.streams, name)
}

// durable returns once the stream's messages up to seq, which the server
// has acknowledged, are fsynced. Writers that wait at the same time share
// one fsync (group commit): a sync covers every sequence waited for when
// it starts, since the server writes a message to its block file before
// it acknowledges it.
func (s *syncer) durable(stream string, seq uint64) error {
	ss := s.stream(stream)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.want = max(ss.want, seq)
	for {
		if ss.failed != nil {
			return ss.failed
		}
		if ss.durable >= seq {
			if s.sameStream(ss) {
				return nil
			}
			if !ss.running {
				// Made anew: its sequences start over.
				ss.durable, ss.want, ss.primed, ss.lastBlk = 0, seq, false, 0
			}
		}
		if ss.running {
			// A sync that may have begun before seq was waited for:
			// wait for it, then look again.
			ss.cond.Wait()
			continue
		}
		ss.running = true
		upTo := ss.want
		ss.mu.Unlock()
		err := s.syncStream(ss)
		ident, _ := os.Stat(s.metaPath(ss))
		ss.mu.Lock()
		ss.running = false
		ss.cond.Broadcast()
		var fatal *fsyncError
		switch {
		case errors.As(err, &fatal):
			ss.failed = fmt.Errorf("JetStream stream %s: %w", stream, err)
		case err != nil:
			return fmt.Errorf("make JetStream stream %s durable: %w", stream, err)
		default:
			ss.durable, ss.ident = max(ss.durable, upTo), ident
		}
	}
}

func (s *syncer) metaPath(ss *streamSync) string { return filepath.Join(s.root, ss.name, "meta.inf") }

// sameStream reports whether the stream is the one ss.durable was reached
// on (a stat of its meta.inf). Holding ss.mu.
func (s *syncer) sameStream(ss *streamSync) bool {
	fi, err := os.Stat(s.metaPath(ss))
	if err != nil || ss.ident == nil {
		return err != nil && ss.ident == nil // no file store: nothing to tell apart
	}
	return os.SameFile(fi, ss.ident) && fi.ModTime().Equal(ss.ident.ModTime())
}

type fsyncError struct{ err error }

func (e *fsyncError) Error() string { return "fsync: " + e.err.Error() }
func (e *fsyncError) Unwrap() error { return e.err }

// syncStream fsyncs the stream's message blocks written since the last
// sync (and, the first time, its metadata, its directory and every
// directory above it up to the data directory). A stream with
// no directory is in memory storage: there is nothing to sync.
func (s *syncer) syncStream(ss *streamSync) error {
	dir := filepath.Join(s.root, ss.name)
	msgs := filepath.Join(dir, "msgs")
	entries, err := os.ReadDir(msgs)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", msgs, err)
	}
	if !ss.primed {
		paths := append([]string{filepath.Join(dir, "meta.inf"), filepath.Join(dir, "meta.sum"), dir, s.root}, s.above...)
		for _, p := range paths {
			if err := s.fsync(p, true); err != nil {
				return err
			}
		}
	}
	var blks []int
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".blk"); ok {
			if i, err := strconv.Atoi(n); err == nil && i >= ss.lastBlk {
				blks = append(blks, i)
			}
		}
	}
	sort.Ints(blks)
	for _, i := range blks {
		// A block may be removed (emptied by retention) since the listing.
		if err := s.fsync(filepath.Join(msgs, strconv.Itoa(i)+".blk"), true); err != nil {
			return err
		}
	}
	if n := len(blks); n > 0 && (blks[n-1] != ss.lastBlk || !ss.primed) {
		// A new block file: its directory entry must be durable too.
		if err := s.fsync(msgs, false); err != nil {
			return err
		}
		ss.lastBlk = blks[n-1]
	}
	ss.primed = true
	return nil
}

// fsync syncs a file or directory; a missing one is skipped when
// mayBeGone.
func (s *syncer) fsync(path string, mayBeGone bool) error {
	f, err := os.Open(path)
	if err != nil {
		if mayBeGone && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return &fsyncError{err}
	}
	defer f.Close()
	s.fsyncs.Add(1)
	if err := f.Sync(); err != nil {
		return &fsyncError{err}
	}
	return nil
}

// durableJS is Broker.JS while streamdb fsyncs the embedded server's
// streams: its publishes report an acknowledgement only once the message
// is durable (when synchronous commit is on). Everything else passes
// through.
type durableJS struct {
	jetstream.JetStream
	s *syncer
}

func (d *durableJS) Publish(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	return d.after(d.JetStream.Publish(ctx, subject, data, opts...))
}

func (d *durableJS) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	return d.after(d.JetStream.PublishMsg(ctx, msg, opts...))
}

func (d *durableJS) after(ack *jetstream.PubAck, err error) (*jetstream.PubAck, error) {
	if err != nil || !d.s.on.Load() {
		return ack, err
	}
	if err := d.s.durable(ack.Stream, ack.Sequence); err != nil {
		return nil, &NotDurableError{Ack: ack, Err: err}
	}
	return ack, nil
}

// NotDurableError is a publish that JetStream stored and acknowledged but
// that could not be fsynced. The message is in the stream: its readers
// take it, and it survives a crash of the process, but an OS crash may
// lose it until a later fsync of the stream succeeds. So a writer must
// count it as written (a table's log keeps it), and tell its client that
// it is there, not that nothing was written.
type NotDurableError struct {
	Ack *jetstream.PubAck
	Err error
}

func (e *NotDurableError) Error() string {
	return fmt.Sprintf("JetStream stored the message (stream %s, sequence %d) but it could not be made durable: %v", e.Ack.Stream, e.Ack.Sequence, e.Err)
}

func (e *NotDurableError) Unwrap() error { return e.Err }

func (d *durableJS) PublishAsync(subject string, data []byte, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	return d.future(d.JetStream.PublishAsync(subject, data, opts...))
}

func (d *durableJS) PublishMsgAsync(msg *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	return d.future(d.JetStream.PublishMsgAsync(msg, opts...))
}

func (d *durableJS) future(f jetstream.PubAckFuture, err error) (jetstream.PubAckFuture, error) {
	if err != nil || !d.s.on.Load() {
		return f, err
	}
	return newDurableFuture(f, d.s), nil
}

// DeleteStream also forgets the stream's durability state.
func (d *durableJS) DeleteStream(ctx context.Context, stream string) error {
	err := d.JetStream.DeleteStream(ctx, stream)
	d.s.forget(stream)
	return err
}

// durableFuture delivers the acknowledgement of an async publish once the
// message is durable. It waits from the start, so that the acks of many
// publishes waited for one by one still share fsyncs.
type durableFuture struct {
	jetstream.PubAckFuture
	ok  chan *jetstream.PubAck
	err chan error
}

func newDurableFuture(f jetstream.PubAckFuture, s *syncer) *durableFuture {
	d := &durableFuture{PubAckFuture: f, ok: make(chan *jetstream.PubAck, 1), err: make(chan error, 1)}
	go func() {
		select {
		case ack := <-f.Ok():
			if err := s.durable(ack.Stream, ack.Sequence); err != nil {
				d.err <- &NotDurableError{Ack: ack, Err: err}
				return
			}
			d.ok <- ack
		case err := <-f.Err():
			d.err <- err
		}
	}()
	return d
}

func (f *durableFuture) Ok() <-chan *jetstream.PubAck { return f.ok }
func (f *durableFuture) Err() <-chan error            { return f.err }

// SetSynchronousCommit chooses whether a write acknowledged to streamdb
// through JS survives an OS crash (on) or only a crash of the process
// (off). It takes effect for publishes made after it. The returned warning,
// when not empty, says why on cannot be honoured.
func (b *Broker) SetSynchronousCommit(on bool) (warning string) {
	if b.syncer != nil {
		b.syncer.on.Store(on)
		return ""
	}
	if !on || b.remoteSyncAlways {
		return ""
	}
	return fmt.Sprintf("synchronous_commit is on, but the NATS server at %s is not known to fsync every write: "+
		"an acknowledged write survives a crash of streamdb, but an OS crash or power loss on the NATS server "+
		"may lose it. Set `jetstream { sync_interval: always }` on every NATS server (streamdb checks it "+
		"through $SYS.REQ.SERVER.PING.VARZ, which needs a system-account user), or set synchronous_commit = off "+
		"to accept this.", b.URL)
}

// SyncMode says what a write acknowledged through JS survives, for the
// log and tests.
func (b *Broker) SyncMode() string {
	switch {
	case b.remoteSyncAlways:
		return "OS crash (the NATS server fsyncs every write)"
	case b.syncer != nil && b.syncer.on.Load():
		return "OS crash (streamdb fsyncs the embedded JetStream streams)"
	}
	return "process crash only"
}

// enableDurable wraps JS so that publishes through it can wait for fsync;
// synchronous commit starts on.
func (b *Broker) enableDurable(ns *server.Server) {
	b.syncer = newSyncer(ns)
	b.syncer.on.Store(true)
	b.JS = &durableJS{JetStream: b.JS, s: b.syncer}
}

// probeRemoteSync asks an external NATS server whether it syncs every
// JetStream write. Only a system-account user may ask; anyone else gets no
// answer, and the server is then not known to sync.
func probeRemoteSync(nc *nats.Conn) bool {
	msg, err := nc.Request("$SYS.REQ.SERVER.PING.VARZ", nil, time.Second)
	if err != nil {
		return false
	}
	var resp struct {
		Data struct {
			JetStream struct {
				Config *struct {
					SyncAlways bool `json:"sync_always"`
				} `json:"config"`
			} `json:"jetstream"`
		} `json:"data"`
	}
	if json.Unmarshal(msg.Data, &resp) != nil || resp.Data.JetStream.Config == nil {
		return false
	}
	return resp.Data.JetStream.Config.SyncAlways
}

// JSUnsynced is the JetStream context whose publishes report the server's
// acknowledgement at once, without waiting for fsync: for a writer that
// publishes under a lock and then, after releasing it, calls WaitDurable,
// so that writers queued on the lock share fsyncs.
func (b *Broker) JSUnsynced() jetstream.JetStream {
	if d, ok := b.JS.(*durableJS); ok {
		return d.JetStream
	}
	return b.JS
}

// WaitDurable returns once the stream's messages up to seq (acknowledged
// by the server) are fsynced, when synchronous commit is on and streamdb
// fsyncs the embedded server's streams; otherwise at once.
func (b *Broker) WaitDurable(stream string, seq uint64) error {
	if b.syncer == nil || !b.syncer.on.Load() {
		return nil
	}
	return b.syncer.durable(stream, seq)
}
