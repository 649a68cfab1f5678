package meta

import (
	"bytes"

	"streamdb/exec"
	"streamdb/storage"
)

// A ROLLBACK TO takes every view back to the point's state, but the
// consumers of a sink have seen (or will see, from the outbox) the view's
// changes up to the current epoch. So the rollback keeps each sink's
// outbox as it was and adds one entry, published right after it, with the
// changes that turn the view's current rows into the point's rows
// (compensating changes): a consumer that applies every message stays
// equal to the view. Sinks are effects outside the database: one created
// after the point is gone with it (as its view may be), and one dropped
// since stays dropped (its consumers stopped getting changes at the DROP;
// resuming them from the point's outbox would skip or repeat changes).

// SinkCarry is every sink, with the outbox and view rows of those that
// started, as they were before a rollback replaced the state.
type SinkCarry struct {
	sinks map[string]*sinkCarry // by sink UID
}

// sinkCarry is one sink's outbox and view rows before a rollback.
type sinkCarry struct {
	started bool
	entries [][2][]byte // key, value
	rows    map[string]exec.RowDiff
}

// CaptureSinks reads every sink, with the outbox and view rows of those
// that started, from store, before a rollback replaces its state.
func CaptureSinks(store *storage.Store) (*SinkCarry, error) {
	sinks, err := storage.Sinks(store.DB())
	if err != nil {
		return nil, err
	}
	ncols, err := viewWidths(store)
	if err != nil {
		return nil, err
	}
	out := &SinkCarry{sinks: map[string]*sinkCarry{}}
	for _, d := range sinks {
		_, started, err := store.Get(storage.SinkStartedKey(d.ID))
		if err != nil {
			return nil, err
		}
		n, ok := ncols[d.ViewID]
		if !started || !ok {
			out.sinks[d.UID()] = &sinkCarry{}
			continue
		}
		c := &sinkCarry{started: true}
		err = storage.ScanPrefix(store.DB(), storage.OutboxPrefix(d.ID), func(k, v []byte) error {
			c.entries = append(c.entries, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
			return nil
		})
		if err != nil {
			return nil, err
		}
		if c.rows, err = exec.ViewCounts(store.DB(), d.ViewID, n); err != nil {
			return nil, err
		}
		out.sinks[d.UID()] = c
	}
	return out, nil
}

// Restore puts the captured outboxes back into store, which now holds
// the point's state, with each sink's compensating changes as the entry
// before epoch+1, and deletes the sinks the point holds that were
// dropped since.
func (carry *SinkCarry) Restore(store *storage.Store, epoch uint64) error {
	sinks, err := storage.Sinks(store.DB())
	if err != nil {
		return err
	}
	ncols, err := viewWidths(store)
	if err != nil {
		return err
	}
	b := store.NewBatch()
	defer b.Close()
	for _, d := range sinks {
		c := carry.sinks[d.UID()]
		if c == nil {
			if err := storage.DeleteSink(b, d); err != nil {
				return err
			}
			continue
		}
		n, ok := ncols[d.ViewID]
		if !c.started || !ok {
			continue
		}
		pre := storage.OutboxPrefix(d.ID)
		if err := b.DeleteRange(pre, storage.PrefixEnd(pre), nil); err != nil {
			return err
		}
		if err := b.Set(storage.SinkStartedKey(d.ID), nil, nil); err != nil {
			return err
		}
		for _, kv := range c.entries {
			if err := b.Set(kv[0], kv[1], nil); err != nil {
				return err
			}
		}
		now, err := exec.ViewCounts(store.DB(), d.ViewID, n)
		if err != nil {
			return err
		}
		if diff := exec.DiffCounts(c.rows, now); len(diff) > 0 {
			if err := b.Set(storage.OutboxKey(d.ID, epoch+1, storage.OutboxRollback), exec.EncodeOutboxChanges(diff), nil); err != nil {
				return err
			}
		}
	}
	return store.Commit(b, true)
}

// viewWidths maps the id of every view and table in store to its number
// of columns.
func viewWidths(store *storage.Store) (map[uint32]int, error) {
	descs, err := storage.Descriptors(store.DB())
	if err != nil {
		return nil, err
	}
	out := map[uint32]int{}
	for _, d := range descs {
		out[d.ID] = len(d.Columns)
	}
	return out, nil
}
