package storage

import (
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
)

// OpenReadOnly opens the Pebble state of a checkpoint or savepoint for
// reading (AS OF queries, rollback). memory selects a full-snapshot
// (memory backend) checkpoint, loaded into an in-memory store.
func OpenReadOnly(stateDir string, memory bool) (*Store, error) {
	if memory {
		s, err := OpenMemory()
		if err != nil {
			return nil, err
		}
		if err := s.ImportSnapshot(stateDir); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	opts := options()
	opts.ReadOnly = true
	db, err := pebble.Open(filepath.Clean(stateDir), opts)
	if err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// ReplaceAll makes the store's content exactly that of from, in one atomic
// batch: readers see either the old state or the new one. The epoch
// counter is set to epoch so that epoch numbers keep increasing.
func (s *Store) ReplaceAll(from *Store, epoch uint64) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange([]byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, nil); err != nil {
		return err
	}
	it, err := from.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := b.Set(it.Key(), it.Value(), nil); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if err := PutEpoch(b, epoch); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}
