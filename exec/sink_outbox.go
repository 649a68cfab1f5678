package exec

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
	"streamdb/storage/keyenc"
)

// A sink's outbox entry (storage.OutboxKey) is either the changes one
// epoch made to the view, consolidated per row (a varint multiplicity
// change and the key-encoded row each), or a snapshot mark: the sink
// starts at that epoch with the view's rows as insertions. A mark holds
// no rows; the publisher computes them from a Pebble snapshot as the
// view's rows minus the changes of the sink's later outbox entries, which
// stay in the outbox until the mark is published. So the sink costs the
// view one small write per epoch however large the view is.
const (
	outboxChanges  byte = 'c'
	outboxSnapshot byte = 's'
)

// EncodeOutboxChanges is the outbox entry for diffs.
func EncodeOutboxChanges(diffs []RowDiff) []byte {
	b := binary.AppendUvarint([]byte{outboxChanges}, uint64(len(diffs)))
	for _, d := range diffs {
		b = binary.AppendVarint(b, d.Diff)
		b = keyenc.AppendRowValue(b, d.Row)
	}
	return b
}

// OutboxEntryInfo says what an outbox entry is without decoding its
// rows: a snapshot mark, or n row changes.
func OutboxEntryInfo(v []byte) (snapshot bool, n uint64) {
	if len(v) == 0 || v[0] == outboxSnapshot {
		return true, 0
	}
	n, _ = binary.Uvarint(v[1:])
	return false, n
}

// DecodeOutboxChanges reads the changes of a non-mark entry.
func DecodeOutboxChanges(v []byte, ncols int) ([]RowDiff, error) {
	if len(v) == 0 || v[0] != outboxChanges {
		return nil, fmt.Errorf("sink outbox: not a changes entry")
	}
	n, k := binary.Uvarint(v[1:])
	if k <= 0 {
		return nil, fmt.Errorf("sink outbox: bad count")
	}
	b := v[1+k:]
	out := make([]RowDiff, 0, n)
	for range n {
		d, k := binary.Varint(b)
		if k <= 0 {
			return nil, fmt.Errorf("sink outbox: bad multiplicity")
		}
		row, rest, err := keyenc.DecodeRow(b[k:], ncols)
		if err != nil {
			return nil, fmt.Errorf("sink outbox: %w", err)
		}
		b = rest
		out = append(out, RowDiff{Row: row, Diff: d})
	}
	return out, nil
}

// SinkChanges expands diffs into single-row changes, as EncodeSinkEpoch
// takes them.
func SinkChanges(diffs []RowDiff) []Change {
	var out []Change
	for _, d := range diffs {
		sign, n := int8(1), d.Diff
		if n < 0 {
			sign, n = -1, -n
		}
		for range n {
			out = append(out, Change{Row: d.Row, Sign: sign})
		}
	}
	return out
}

// sinkTap is one sink of a view, as its pipeline sees it. started is read
// and written by the pipeline's goroutine only.
type sinkTap struct {
	id      uint32
	started bool
}

// sinkTaps is the sink side of a view's edgeHub: the changes of the epoch
// in progress (only the pipeline's goroutine touches cur) and the sinks.
type sinkTaps struct {
	mu   sync.Mutex // serializes updates of taps
	taps atomic.Pointer[[]*sinkTap]
	cur  []*Chunk
}

func (s *sinkTaps) load() []*sinkTap {
	if p := s.taps.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *sinkTaps) update(f func([]*sinkTap) []*sinkTap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := f(s.load())
	s.taps.Store(&n)
}

func (s *sinkTaps) active() bool { return len(s.load()) > 0 }

// write records the epoch's changes in the outbox of every started sink,
// in b (the epoch's batch), and starts the sinks that joined since the
// last barrier with a snapshot mark at epoch (their snapshot includes the
// epoch's changes).
func (s *sinkTaps) write(b *pebble.Batch, epoch uint64) error {
	cur := s.cur
	s.cur = nil
	taps := s.load()
	var val []byte
	consolidated := false
	for _, t := range taps {
		if !t.started {
			if err := b.Set(storage.SinkStartedKey(t.id), binary.BigEndian.AppendUint64(nil, epoch), nil); err != nil {
				return err
			}
			if err := b.Set(storage.OutboxKey(t.id, epoch, storage.OutboxEpoch), []byte{outboxSnapshot}, nil); err != nil {
				return err
			}
			t.started = true
			continue
		}
		if !consolidated && len(cur) > 0 {
			if diffs := (EpochChanges{chunks: cur}).Consolidate(); len(diffs) > 0 {
				val = EncodeOutboxChanges(diffs)
			}
			consolidated = true
		}
		if val == nil {
			continue // the epoch changed nothing
		}
		if err := b.Set(storage.OutboxKey(t.id, epoch, storage.OutboxEpoch), val, nil); err != nil {
			return err
		}
	}
	return nil
}

// AddSink makes the running pipeline of view viewID write the outbox of
// sink sinkID from its next barrier on, which starts the sink. A view not
// running picks its sinks up from the store when it starts.
func (rt *Runtime) AddSink(viewID, sinkID uint32) {
	rt.mu.Lock()
	p := rt.pipelines[viewID]
	rt.mu.Unlock()
	if p == nil || p.hub == nil {
		return
	}
	p.hub.sinks.update(func(old []*sinkTap) []*sinkTap {
		return append(append([]*sinkTap(nil), old...), &sinkTap{id: sinkID})
	})
}

// RemoveSink stops writing sink sinkID's outbox. An epoch in flight may
// still write one entry; the publisher deletes entries of unknown sinks.
func (rt *Runtime) RemoveSink(viewID, sinkID uint32) {
	rt.mu.Lock()
	p := rt.pipelines[viewID]
	rt.mu.Unlock()
	if p == nil || p.hub == nil {
		return
	}
	p.hub.sinks.update(func(old []*sinkTap) []*sinkTap {
		var out []*sinkTap
		for _, t := range old {
			if t.id != sinkID {
				out = append(out, t)
			}
		}
		return out
	})
}

// loadSinkTaps returns the sinks of view id recorded in the store.
func loadSinkTaps(store *storage.Store, id uint32) ([]*sinkTap, error) {
	sinks, err := storage.Sinks(store.DB())
	if err != nil {
		return nil, err
	}
	var out []*sinkTap
	for _, d := range sinks {
		if d.ViewID != id {
			continue
		}
		_, started, err := store.Get(storage.SinkStartedKey(d.ID))
		if err != nil {
			return nil, err
		}
		out = append(out, &sinkTap{id: d.ID, started: started})
	}
	return out, nil
}
