package meta

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/sqlerr"
)

// Sequences' values (CREATE SEQUENCE, serial and identity columns).
//
// A sequence's definition is a catalog object; its values are not. They
// are reserved durably in blocks, as PostgreSQL logs values ahead: before
// Next hands out a value not covered by the last reservation, the
// sequence publishes a record to the JetStream stream sequenceStream
// (one subject per sequence, newest record kept) saying where it resumes
// after a crash, the first value past the new block, and waits until
// JetStream holds it. A crash loses at most the rest of a block; no value
// is handed out twice. The records live in JetStream, not in Pebble,
// because Pebble is restored from a checkpoint after a crash and by
// ROLLBACK TO: a sequence keeps counting across both. A sequence brought
// back by ROLLBACK TO (dropped after the savepoint) resumes where it was
// when dropped, so even then no value repeats; Set (setval, ALTER
// SEQUENCE RESTART) is the only way to go back, as in PostgreSQL.

// sequenceStream is the JetStream stream of sequences' records.
const sequenceStream = "streamdb-sequences"

// sequenceSubjectPrefix is where each sequence's records go, by its key:
// under tables' subjects, which producers may not publish to.
const sequenceSubjectPrefix = broker.TableSubjectPrefix + "_sequences."

// minSequenceBlock is the fewest values one reservation covers (a
// sequence's CACHE, when larger, sets it): PostgreSQL logs 32 ahead. A
// sequence that needs another reservation within reserveWindow of the
// last doubles its block, up to maxSequenceBlock, so that a bulk load
// into a serial column waits for a durable write every few thousand
// rows, not every 32; a crash can then lose up to that many values, a
// clean shutdown none (Flush).
const (
	minSequenceBlock = 32
	maxSequenceBlock = 4096
	reserveWindow    = time.Second
)

// Sequences holds the values of every sequence used since the server
// started, by key, and reserves them in JetStream. mu is a leaf lock; a
// sequence's own lock is taken after it is released, and held while its
// record is published.
type Sequences struct {
	b     *broker.Broker
	log   *slog.Logger
	mu    sync.Mutex
	ready bool
	byKey map[string]*seqState
}

// NewSequences keeps sequences' values in b's JetStream.
func NewSequences(b *broker.Broker, log *slog.Logger) *Sequences {
	return &Sequences{b: b, log: log, byKey: map[string]*seqState{}}
}

// seqState is where a sequence is: next is the value Next hands out
// next (exhausted: none is left), avail how many values from next on the
// newest durable record covers.
type seqState struct {
	mu        sync.Mutex
	loaded    bool
	next      int64
	exhausted bool
	avail     uint64
	// last is the value handed out (or set) last, when called.
	last   int64
	called bool
	// block is the size of the last reservation, made at reserved.
	block    uint64
	reserved time.Time
}

// seqRecord is a sequence's durable record: after a restart it resumes
// at Next, or is exhausted.
type seqRecord struct {
	Next      int64 `json:"next"`
	Exhausted bool  `json:"exhausted,omitempty"`
}

func (s *Sequences) state(ctx context.Context, d *catalog.Descriptor) (*seqState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		if err := s.b.EnsureRecordStream(ctx, sequenceStream, sequenceSubjectPrefix+">"); err != nil {
			return nil, sqlerr.New(sqlerr.InternalError, "sequence %s: %v", d.Name, err)
		}
		s.ready = true
	}
	st := s.byKey[d.Sequence.Key]
	if st == nil {
		st = &seqState{}
		s.byKey[d.Sequence.Key] = st
	}
	return st, nil
}

// load reads the sequence's record once. The caller holds st.mu.
func (s *Sequences) load(ctx context.Context, d *catalog.Descriptor, st *seqState) error {
	if st.loaded {
		return nil
	}
	data, found, err := s.b.LastRecord(ctx, sequenceStream, sequenceSubjectPrefix+d.Sequence.Key)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "sequence %s: %v", d.Name, err)
	}
	st.next, st.exhausted = d.Sequence.Start, false
	if found {
		var rec seqRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return sqlerr.New(sqlerr.DataCorrupted, "sequence %s: its record %q does not decode: %v", d.Name, data, err)
		}
		st.next, st.exhausted = rec.Next, rec.Exhausted
		st.called = rec.Exhausted || rec.Next != d.Sequence.Start
		st.last = rec.Next - d.Sequence.Increment
		if rec.Exhausted {
			st.last = d.Sequence.Max
			if d.Sequence.Increment < 0 {
				st.last = d.Sequence.Min
			}
		}
	}
	st.avail = 0
	st.loaded = true
	return nil
}

// put publishes rec for the sequence. The caller holds st.mu.
func (s *Sequences) put(ctx context.Context, d *catalog.Descriptor, rec seqRecord) error {
	data, _ := json.Marshal(rec)
	if err := s.b.PutRecord(ctx, sequenceSubjectPrefix+d.Sequence.Key, data); err != nil {
		return sqlerr.New(sqlerr.InternalError, "sequence %s: reserving values: %v", d.Name, err)
	}
	return nil
}

// remaining is how many values of the sequence there are from v (within
// its bounds) on, up to its last value, v included.
func remaining(q *catalog.Sequence, v int64) uint64 {
	if q.Increment > 0 {
		return (uint64(q.Max)-uint64(v))/uint64(q.Increment) + 1
	}
	return (uint64(v)-uint64(q.Min))/(uint64(-(q.Increment+1))+1) + 1
}

// Next hands out the sequence's next value (nextval).
func (s *Sequences) Next(ctx context.Context, d *catalog.Descriptor) (int64, error) {
	q := d.Sequence
	st, err := s.state(ctx, d)
	if err != nil {
		return 0, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := s.load(ctx, d, st); err != nil {
		return 0, err
	}
	if !st.exhausted && (st.next < q.Min || st.next > q.Max) {
		// ALTER SEQUENCE moved a bound past where the sequence is.
		st.exhausted = q.Increment > 0 && st.next > q.Max || q.Increment < 0 && st.next < q.Min
		if !st.exhausted {
			st.next, st.avail = q.Min, 0
			if q.Increment < 0 {
				st.next = q.Max
			}
		}
	}
	if st.exhausted {
		if !q.Cycle {
			if q.Increment > 0 {
				return 0, sqlerr.New(sqlerr.SequenceGeneratorLimitExceeded, "nextval: reached maximum value of sequence \"%s\" (%d)", d.Name, q.Max)
			}
			return 0, sqlerr.New(sqlerr.SequenceGeneratorLimitExceeded, "nextval: reached minimum value of sequence \"%s\" (%d)", d.Name, q.Min)
		}
		st.next, st.exhausted, st.avail = q.Min, false, 0
		if q.Increment < 0 {
			st.next = q.Max
		}
	}
	if st.avail == 0 {
		block := uint64(max(q.Cache, minSequenceBlock))
		if now := time.Now(); now.Sub(st.reserved) < reserveWindow {
			block = max(block, min(2*st.block, maxSequenceBlock))
		}
		rec := seqRecord{Exhausted: true}
		n := remaining(q, st.next)
		if n > block {
			rec = seqRecord{Next: st.next + q.Increment*int64(block)}
			n = block
		}
		if err := s.put(ctx, d, rec); err != nil {
			return 0, err
		}
		st.avail, st.block, st.reserved = n, block, time.Now()
	}
	v := st.next
	st.avail--
	st.last, st.called = v, true
	if remaining(q, v) == 1 {
		st.exhausted = true
	} else {
		st.next = v + q.Increment
	}
	return v, nil
}

// Set moves the sequence to v (setval): Next answers v next when called
// is false, the value after v when it is true.
func (s *Sequences) Set(ctx context.Context, d *catalog.Descriptor, v int64, called bool) error {
	q := d.Sequence
	if v < q.Min || v > q.Max {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", v, d.Name, q.Min, q.Max)
	}
	st, err := s.state(ctx, d)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := seqRecord{Next: v}
	if called {
		if remaining(q, v) == 1 {
			rec = seqRecord{Exhausted: true}
		} else {
			rec.Next = v + q.Increment
		}
	}
	if err := s.put(ctx, d, rec); err != nil {
		return err
	}
	st.loaded, st.next, st.exhausted, st.avail = true, rec.Next, rec.Exhausted, 0
	st.last, st.called = v, called
	return nil
}

// Last is the value handed out last (pg_sequences.last_value), or false
// when none was since the sequence was created or set.
func (s *Sequences) Last(ctx context.Context, d *catalog.Descriptor) (int64, bool, error) {
	st, err := s.state(ctx, d)
	if err != nil {
		return 0, false, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := s.load(ctx, d, st); err != nil {
		return 0, false, err
	}
	return st.last, st.called, nil
}

// Altered follows a change of the sequence's options (ALTER SEQUENCE; d
// is the new definition): the next value is the last one plus the new
// increment, and the values reserved ahead are given up, so that the
// next reservation follows the new options.
func (s *Sequences) Altered(ctx context.Context, d *catalog.Descriptor) error {
	q := d.Sequence
	st, err := s.state(ctx, d)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	err = s.load(ctx, d, st)
	if err == nil && st.called {
		v := st.last + q.Increment
		overflow := q.Increment > 0 && v < st.last || q.Increment < 0 && v > st.last
		st.next, st.exhausted = v, overflow || v < q.Min || v > q.Max
	}
	st.avail = 0
	return err
}

// Flush records, for every sequence used since the start, where it is
// now, so that a clean restart goes on without the gap of the values
// reserved ahead. A Next after it reserves again.
func (s *Sequences) Flush(ctx context.Context) {
	s.mu.Lock()
	states := make(map[string]*seqState, len(s.byKey))
	for k, st := range s.byKey {
		states[k] = st
	}
	s.mu.Unlock()
	for key, st := range states {
		st.mu.Lock()
		if st.loaded && st.avail > 0 {
			data, _ := json.Marshal(seqRecord{Next: st.next, Exhausted: st.exhausted})
			if err := s.b.PutRecord(ctx, sequenceSubjectPrefix+key, data); err != nil {
				s.log.Warn("recording a sequence's position at shutdown failed; it goes on after its reserved values", "key", key, "err", err)
			}
			st.avail = 0
		}
		st.mu.Unlock()
	}
}
