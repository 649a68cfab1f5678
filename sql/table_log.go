package sql

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

// tableLogs holds the write state of every table, by id.
type tableLogs struct {
	mu   sync.Mutex
	logs map[uint32]*tableLog
}

// tableLog is the write state of one table.
type tableLog struct {
	// mu is held by a writer while it reads the table and queues its
	// commit (or, for a commit across several subjects, until it is
	// published).
	mu sync.Mutex
	// current (under mu) means every change published to the table's
	// subject is in the table's committed state or in entries. It is
	// false after start and after a rollback, until a writer has waited
	// for the pipeline to apply the whole subject once.
	current bool
	// unsure is set when a publish failed: it may have been stored all
	// the same, so current no longer holds (see ensureCurrent).
	unsure atomic.Bool
	// encodedCols (under mu) are the columns a commit was last encoded
	// with, its rows read back: later commits with the same columns need
	// not read back a row to check them (exec.EncodeChangelogChunks).
	encodedCols []types.Column

	// imu guards the fields below; readers outside mu consult entries.
	imu sync.Mutex
	// entries are the commits the table's committed state may not hold
	// yet, in changelog order: acknowledged ones (seq > 0) first, then
	// queued ones (seq == 0).
	entries []*logEntry
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

// logEntry is one commit to a table.
type logEntry struct {
	changes []exec.Change // in changelog order
	part    []byte        // the changes as a changelog message, "[...]"
	seq     uint64        // JetStream sequence once acknowledged
	done    chan error    // receives the outcome once, when published or failed
	keys    []string      // each change's row identity while in the log's index
}

func (w *tableLogs) log(id uint32) *tableLog {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.logs == nil {
		w.logs = map[uint32]*tableLog{}
	}
	l, ok := w.logs[id]
	if !ok {
		l = &tableLog{idle: make(chan struct{})}
		w.logs[id] = l
	}
	return l
}

// reset forgets every table's entries: a rollback replaced the state they
// were relative to. The caller holds stateMu exclusively, so no writer
// holds a log and no commit is being published.
func (w *tableLogs) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logs = nil
}

// snapshot takes a snapshot of the store and returns it with the changes
// of the entries past the table's position in it (acknowledged or queued),
// in order, and forgets acknowledged entries at or before that position
// (the snapshot holds them). Snapshots are taken under imu so that a later
// caller's snapshot is never older than what an earlier one forgot. The
// version returned is the entries' (see newestChange) once trimmed. The
// entries returned share the log's array: entries are only ever appended
// past them or dropped from the front, never overwritten in place.
func (l *tableLog) snapshot(store *storage.Store, id uint32) (*pebble.Snapshot, []*logEntry, uint64, error) {
	l.imu.Lock()
	defer l.imu.Unlock()
	snap := store.Snapshot()
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
func (l *tableLog) forgetThrough(seq uint64) {
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

// txSnapshot is what a transaction block reads: one Pebble snapshot taken
// at its first statement and, per table, the acknowledged commits past
// the table's position in it.
type txSnapshot struct {
	snap    *pebble.Snapshot
	pending map[uint32][]exec.Change
}

// snapshotAll takes a txSnapshot. It holds every table's imu while it
// takes the snapshot, so no entry it needs has been forgotten (see
// snapshot); a table without a log yet has no entries from before it.
// Queued commits are not committed yet, so they are left out.
func (w *tableLogs) snapshotAll(store *storage.Store) (*txSnapshot, error) {
	w.mu.Lock()
	ids := make([]uint32, 0, len(w.logs))
	for id := range w.logs {
		ids = append(ids, id)
	}
	// In id order: two snapshots taking the locks in different orders
	// would each wait for the other.
	slices.Sort(ids)
	logs := make([]*tableLog, len(ids))
	for i, id := range ids {
		logs[i] = w.logs[id]
	}
	w.mu.Unlock()
	for _, l := range logs {
		l.imu.Lock()
	}
	defer func() {
		for _, l := range logs {
			l.imu.Unlock()
		}
	}()
	ts := &txSnapshot{snap: store.Snapshot(), pending: map[uint32][]exec.Change{}}
	for i, l := range logs {
		pos, err := storage.PositionAt(ts.snap, ids[i], 0)
		if err != nil {
			ts.snap.Close()
			return nil, err
		}
		for _, en := range l.entries {
			if en.seq > pos.Seq {
				ts.pending[ids[i]] = append(ts.pending[ids[i]], en.changes...)
			}
		}
	}
	return ts, nil
}

// queue appends a commit to be published. Holding mu.
func (l *tableLog) queue(changes []exec.Change, part []byte) *logEntry {
	en := &logEntry{changes: changes, part: part, done: make(chan error, 1)}
	l.imu.Lock()
	l.entries = append(l.entries, en)
	l.indexEntry(en)
	l.version++
	l.imu.Unlock()
	return en
}

// added records a commit published outside the queue (a commit across
// several subjects, published while holding mu with the queue idle).
func (l *tableLog) added(seq uint64, changes []exec.Change) {
	en := &logEntry{changes: changes, seq: seq}
	l.imu.Lock()
	l.entries = append(l.entries, en)
	l.indexEntry(en)
	l.version++
	l.imu.Unlock()
}

// waitIdle waits until no queued entry is left unpublished. Holding mu, so
// nothing new is queued meanwhile.
func (l *tableLog) waitIdle() {
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

// publishTimeout bounds one changelog publish; JetStream answers well
// within it unless it is unreachable.
const publishTimeout = 30 * time.Second

// await has en published (starting a leader if none runs) and returns
// its outcome.
func (l *tableLog) await(e *Engine, d *catalog.Descriptor, en *logEntry) error {
	l.imu.Lock()
	lead := !l.publishing
	l.publishing = true
	l.imu.Unlock()
	if lead {
		go l.lead(e, d)
	}
	return <-en.done
}

// lead publishes queued entries, as many as fit in one message at a
// time, until none is left.
func (l *tableLog) lead(e *Engine, d *catalog.Descriptor) {
	limit := e.changelogLimit()
	for {
		l.imu.Lock()
		var batch []*logEntry
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
		fenceErr := e.checkFence()
		err := fenceErr
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
			// A stream whose store failed never answers: stop waiting
			// once the broker records that failure for this stream.
			go func(failed <-chan struct{}) {
				select {
				case <-failed:
					if e.broker.StreamWriteError(d.JSStream, "") != nil {
						cancel()
					}
				case <-ctx.Done():
				}
			}(e.broker.StreamFailed())
			ack, err = e.broker.JS.Publish(ctx, d.Subject, msg, jetstream.WithExpectStream(d.JSStream))
			cancel()
		}

		// Stored but not fsynced: the message is in the changelog and the
		// table takes it, so the log keeps it as written, and its writers
		// are told that it is there.
		var outcome error
		var notDurable *broker.NotDurableError
		if errors.As(err, &notDurable) {
			ack, err = notDurable.Ack, nil
			outcome = storedNotDurable(fmt.Sprintf("the write to table %q", d.Name), notDurable)
		}
		if err == nil {
			// Recorded before any writer hears back: a read that starts
			// after its COMMIT returned must wait for this message.
			e.acknowledged(d.Subject, ack.Sequence)
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
			if se := e.broker.StreamWriteError(d.JSStream, what); se != nil {
				failed = se
			} else {
				failed = e.publishFailure(err, what)
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
func (l *tableLog) failQueued(batch []*logEntry, failed, later error) {
	// A new array: readers may hold the old one (snapshot).
	var kept []*logEntry
	inBatch := map[*logEntry]bool{}
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
