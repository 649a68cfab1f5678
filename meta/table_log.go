package meta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// Only this server writes a table's changelog, and it writes it through
// the table's log:
//
//   - A writer computes and checks its changes under the log's lock (mu),
//     reading the table as its committed state plus every commit after
//     that state's position (entries), then appends its own entry and
//     lets the lock go. So commits to one table are serialised, and no
//     writer waits for the table's pipeline to apply earlier commits.
//   - Entries are published in order by one leader at a time (group
//     commit): the entries queued while the previous message was in
//     flight go out together as ONE changelog message, so many sessions
//     share one JetStream write (and, with synchronous_commit, one fsync).
//     A message holds whole commits, so each lands whole or not at all.
//   - If a message fails, its commits and every commit queued after it
//     (computed on top of them) fail, and none of them is kept.
//   - An entry stays until the table's committed state holds it (its
//     sequence is at or below the table's position in a snapshot).

// TableLog is the write state of one table.
type TableLog struct {
	// t is the writer the log publishes through.
	t *Tables
	// mu is held by a writer while it reads the table and queues its
	// commit (or, for a commit across several subjects, until it is
	// published): Lock and Unlock.
	mu sync.Mutex
	// current (under mu) means every change published to the table's
	// subject is in the table's committed state or in entries. It is
	// false after start and after a rollback, until a writer has waited
	// for the pipeline to apply the whole subject once.
	current bool
	// unsure is set when a publish failed: it may have been stored all
	// the same, so current no longer holds (see EnsureCurrent).
	unsure atomic.Bool
	// encodedCols (under mu) are the columns a commit was last encoded
	// with, its rows read back: later commits with the same columns need
	// not read back a row to check them (exec.EncodeChangelogChunks;
	// EncodedCols, SetEncodedCols).
	encodedCols []types.Column

	// imu guards the fields below; readers outside mu consult entries.
	imu sync.Mutex
	// entries are the commits the table's committed state may not hold
	// yet, in changelog order: acknowledged ones (seq > 0) first, then
	// queued ones (seq == 0).
	entries []*LogEntry
	// publishing is set while a leader publishes queued entries.
	publishing bool
	// idle is closed (and replaced) whenever the leader stops.
	idle chan struct{}
	// version counts the changes to entries (added or removed), so that
	// a reader can tell its view of them from snapshot still holds.
	version uint64
	// index finds the newest entry change by row identity; nil until a
	// point read needs it (table_log_index.go).
	index *keyIndex
	// values find the entry changes holding a unique index's values, one
	// per column list looked up (table_log_values.go).
	values []*valueIndex
}

// LogEntry is one commit to a table.
type LogEntry struct {
	changes []exec.Change // in changelog order
	part    []byte        // the changes as a changelog message, "[...]"
	seq     uint64        // JetStream sequence once acknowledged
	done    chan error    // receives the outcome once, when published or failed
	keys    []string      // each change's row identity while in the log's index
}

// Changes are the commit's changes, in changelog order.
func (en *LogEntry) Changes() []exec.Change { return en.changes }

func newTableLog(t *Tables) *TableLog {
	return &TableLog{t: t, idle: make(chan struct{})}
}

// Log returns the log of table id, made at its first use.
func (t *Tables) Log(id uint32) *TableLog {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.logs == nil {
		t.logs = map[uint32]*TableLog{}
	}
	l, ok := t.logs[id]
	if !ok {
		l = newTableLog(t)
		t.logs[id] = l
	}
	return l
}

// Reset forgets every table's entries: a rollback replaced the state they
// were relative to (or DDL rewrote a table's state). The caller holds
// stateMu exclusively, so no writer holds a log and no commit is being
// published.
func (t *Tables) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs = nil
}

// Lock takes the log's writer lock: a writer holds it while it reads the
// table and queues its commit, so commits to one table are serialised.
func (l *TableLog) Lock() { l.mu.Lock() }

// Unlock lets the log's writer lock go.
func (l *TableLog) Unlock() { l.mu.Unlock() }

// EncodedCols are the columns a commit was last encoded with, its rows
// read back (nil at first). Holding the lock.
func (l *TableLog) EncodedCols() []types.Column { return l.encodedCols }

// SetEncodedCols records the columns a commit was encoded with, its rows
// read back. Holding the lock.
func (l *TableLog) SetEncodedCols(cols []types.Column) { l.encodedCols = cols }

// MarkStale makes the next writer wait for the table to apply its whole
// changelog before it reads the table: something was published to it
// that the log does not hold. Holding the lock.
func (l *TableLog) MarkStale() { l.current = false }

// MarkUnsure makes the next writer reread the whole changelog: a publish
// failed and may have been stored all the same. Any goroutine.
func (l *TableLog) MarkUnsure() { l.unsure.Store(true) }

// EnsureCurrent makes sure the log covers everything published to table
// d's subject (see current): the first write after a start, a rollback
// or an unsure publish waits until the table's state holds the whole
// changelog. Holding the lock.
func (l *TableLog) EnsureCurrent(ctx context.Context, d *catalog.Descriptor) error {
	if l.unsure.Swap(false) {
		l.current = false
	}
	if l.current {
		return nil
	}
	if err := l.t.waitTableCurrent(ctx, d, "a write"); err != nil {
		return err
	}
	l.current = true
	return nil
}

// Snapshot takes a snapshot of the store and returns it with the changes
// of the entries past the table's position in it (acknowledged or queued),
// in order, and forgets acknowledged entries at or before that position
// (the snapshot holds them). Snapshots are taken under imu so that a later
// caller's snapshot is never older than what an earlier one forgot. The
// version returned is the entries' (see newestChange) once trimmed. The
// entries returned share the log's array: entries are only ever appended
// past them or dropped from the front, never overwritten in place.
func (l *TableLog) Snapshot(id uint32) (*pebble.Snapshot, []*LogEntry, uint64, error) {
	l.imu.Lock()
	defer l.imu.Unlock()
	snap := l.t.cfg.Store.Snapshot()
	pos, err := storage.PositionAt(snap, id, 0)
	if err != nil {
		snap.Close()
		return nil, nil, 0, err
	}
	l.forgetThrough(pos.Seq)
	return snap, l.entries[:len(l.entries):len(l.entries)], l.version, nil
}

// forgetThrough drops the leading acknowledged entries at or before
// sequence seq. Holding imu.
func (l *TableLog) forgetThrough(seq uint64) {
	i := 0
	for i < len(l.entries) && l.entries[i].seq != 0 && l.entries[i].seq <= seq {
		l.unindexEntry(l.entries[i])
		i++
	}
	if i > 0 {
		l.entries = l.entries[i:]
		l.version++
	}
}

// TxSnapshot is what a transaction block reads: one Pebble snapshot taken
// at its first statement and, per table, the acknowledged commits past
// the table's position in it.
type TxSnapshot struct {
	Snap    *pebble.Snapshot
	Pending map[uint32][]exec.Change
}

// SnapshotAll takes a TxSnapshot. It holds every table's imu while it
// takes the snapshot, so no entry it needs has been forgotten (see
// Snapshot); a table without a log yet has no entries from before it.
// Queued commits are not committed yet, so they are left out.
func (t *Tables) SnapshotAll() (*TxSnapshot, error) {
	t.mu.Lock()
	ids := make([]uint32, 0, len(t.logs))
	for id := range t.logs {
		ids = append(ids, id)
	}
	// In id order: two snapshots taking the locks in different orders
	// would each wait for the other.
	slices.Sort(ids)
	logs := make([]*TableLog, len(ids))
	for i, id := range ids {
		logs[i] = t.logs[id]
	}
	t.mu.Unlock()
	for _, l := range logs {
		l.imu.Lock()
	}
	defer func() {
		for _, l := range logs {
			l.imu.Unlock()
		}
	}()
	ts := &TxSnapshot{Snap: t.cfg.Store.Snapshot(), Pending: map[uint32][]exec.Change{}}
	for i, l := range logs {
		pos, err := storage.PositionAt(ts.Snap, ids[i], 0)
		if err != nil {
			ts.Snap.Close()
			return nil, err
		}
		for _, en := range l.entries {
			if en.seq > pos.Seq {
				ts.Pending[ids[i]] = append(ts.Pending[ids[i]], en.changes...)
			}
		}
	}
	return ts, nil
}

// Queue appends a commit to be published: its changes and the changelog
// message "[...]" that carries them. Holding the lock; Await then.
func (l *TableLog) Queue(changes []exec.Change, part []byte) *LogEntry {
	en := &LogEntry{changes: changes, part: part, done: make(chan error, 1)}
	l.imu.Lock()
	l.entries = append(l.entries, en)
	l.indexEntry(en)
	l.version++
	l.imu.Unlock()
	return en
}

// added records a commit published outside the queue (a commit across
// several subjects, published while holding mu with the queue idle).
func (l *TableLog) added(seq uint64, changes []exec.Change) {
	en := &LogEntry{changes: changes, seq: seq}
	l.imu.Lock()
	l.entries = append(l.entries, en)
	l.indexEntry(en)
	l.version++
	l.imu.Unlock()
}

// WaitIdle waits until no queued entry is left unpublished. Holding the
// lock, so nothing new is queued meanwhile: a commit published outside
// the queue goes after what is queued.
func (l *TableLog) WaitIdle() {
	for {
		l.imu.Lock()
		busy := l.publishing
		idle := l.idle
		l.imu.Unlock()
		if !busy {
			return
		}
		<-idle
	}
}

// PublishTimeout bounds one changelog publish; JetStream answers well
// within it unless it is unreachable.
const PublishTimeout = 30 * time.Second

// Await has en, queued to table d's log, published (starting a leader if
// none runs) and returns its outcome.
func (l *TableLog) Await(d *catalog.Descriptor, en *LogEntry) error {
	l.imu.Lock()
	lead := !l.publishing
	l.publishing = true
	l.imu.Unlock()
	if lead {
		go l.lead(d)
	}
	return <-en.done
}

// lead publishes queued entries, as many as fit in one message at a
// time, until none is left.
func (l *TableLog) lead(d *catalog.Descriptor) {
	t := l.t
	limit := t.ChangelogLimit()
	for {
		l.imu.Lock()
		var batch []*LogEntry
		size := 2
		for _, en := range l.entries {
			if en.seq != 0 {
				continue
			}
			if len(batch) > 0 && size+len(en.part) > limit {
				break
			}
			batch = append(batch, en)
			size += len(en.part)
		}
		if len(batch) == 0 {
			l.publishing = false
			close(l.idle)
			l.idle = make(chan struct{})
			l.imu.Unlock()
			return
		}
		l.imu.Unlock()

		msg := make([]byte, 0, size)
		msg = append(msg, '[')
		for _, en := range batch {
			inner := en.part[1 : len(en.part)-1]
			if len(inner) == 0 {
				continue
			}
			if len(msg) > 1 {
				msg = append(msg, ',')
			}
			msg = append(msg, inner...)
		}
		msg = append(msg, ']')
		var ack *jetstream.PubAck
		fenceErr := t.checkFence()
		err := fenceErr
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
			// A stream whose store failed never answers: stop waiting
			// once the broker records that failure for this stream.
			go func(failed <-chan struct{}) {
				select {
				case <-failed:
					if t.cfg.Broker.StreamWriteError(d.JSStream, "") != nil {
						cancel()
					}
				case <-ctx.Done():
				}
			}(t.cfg.Broker.StreamFailed())
			ack, err = t.cfg.Broker.JS.Publish(ctx, d.Subject, msg, jetstream.WithExpectStream(d.JSStream))
			cancel()
		}

		// Stored but not fsynced: the message is in the changelog and the
		// table takes it, so the log keeps it as written, and its writers
		// are told that it is there.
		var outcome error
		var notDurable *broker.NotDurableError
		if errors.As(err, &notDurable) {
			ack, err = notDurable.Ack, nil
			outcome = StoredNotDurable(fmt.Sprintf("the write to table %q", d.Name), notDurable)
		}
		if err == nil {
			// Recorded before any writer hears back: a read that starts
			// after its COMMIT returned must wait for this message.
			t.cfg.Acknowledged(d.Subject, ack.Sequence)
			l.imu.Lock()
			for _, en := range batch {
				en.seq = ack.Sequence
				en.done <- outcome
			}
			l.imu.Unlock()
			continue
		}
		l.imu.Lock()
		// The batch failed, and every commit queued after it was computed
		// on top of it: fail them all, keep none.
		failed := fenceErr
		if failed == nil {
			what := fmt.Sprintf("could not write to table %q", d.Name)
			if se := t.cfg.Broker.StreamWriteError(d.JSStream, what); se != nil {
				failed = se
			} else {
				failed = t.publishFailure(err, what)
			}
		}
		// Without an acknowledgement the message may still have been
		// stored: the next writer rereads the whole changelog first.
		l.unsure.Store(true)
		later := sqlerr.New(sqlerr.SerializationFailure, "a commit to table %q queued before this one failed, so this one was not written", d.Name).
			WithHint("Retry the transaction.")
		l.failQueued(batch, failed, later)
		l.imu.Unlock()
	}
}

// failQueued drops every queued entry, answering failed to those of the
// batch that failed and later to the rest. Holding imu.
func (l *TableLog) failQueued(batch []*LogEntry, failed, later error) {
	// A new array: readers may hold the old one (Snapshot).
	var kept []*LogEntry
	inBatch := map[*LogEntry]bool{}
	for _, en := range batch {
		inBatch[en] = true
	}
	for _, en := range l.entries {
		switch {
		case en.seq != 0:
			kept = append(kept, en)
		case inBatch[en]:
			en.done <- failed
		default:
			en.done <- later
		}
	}
	l.entries = kept
	l.index, l.values = nil, nil // removed out of order: rebuilt when next needed
	l.version++
}
