package storage

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
)

// A Scratch is a temporary sorted key-value store on disk for what one
// session cannot keep in memory (a transaction block's changes past its
// budget). It is its own small Pebble database in a directory under the
// store's ("scratch-*"), written without a WAL and never synced: nothing
// in it outlives the process, and Open removes what a crash left behind
// (removeStaleSpills). Its memory is one small memtable and the shared
// block cache.
type Scratch struct {
	dir string
	db  *pebble.DB
}

// scratchMemTable is a scratch store's memtable size: what a block holds
// in memory past its budget before the changes reach files.
const scratchMemTable = 4 << 20

// OpenScratch opens an empty scratch store. Close removes it.
func (s *Store) OpenScratch() (*Scratch, error) {
	parent := s.dir
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "scratch-")
	if err != nil {
		return nil, fmt.Errorf("open a scratch store: %w", err)
	}
	opts := &pebble.Options{MemTableSize: scratchMemTable, Logger: pebbleLogger{}, Cache: sharedBlockCache(), DisableWAL: true}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("open a scratch store: %w", err)
	}
	return &Scratch{dir: dir, db: db}, nil
}

// Close closes the store and removes its files.
func (sc *Scratch) Close() error {
	err := sc.db.Close()
	return errors.Join(err, os.RemoveAll(sc.dir))
}

// Write applies the sets and deletes fill makes as one batch.
func (sc *Scratch) Write(fill func(set func(k, v []byte), del func(k []byte))) error {
	b := sc.db.NewBatch()
	defer b.Close()
	var err error
	fill(func(k, v []byte) { err = errors.Join(err, b.Set(k, v, nil)) },
		func(k []byte) { err = errors.Join(err, b.Delete(k, nil)) })
	if err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

// Scan hands fn the keys in [lo, hi) with their values, in increasing
// order (decreasing when reverse), until fn answers false. The slices are
// valid only during the call.
func (sc *Scratch) Scan(lo, hi []byte, reverse bool, fn func(k, v []byte) (bool, error)) error {
	it, err := sc.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	valid := it.First()
	next := it.Next
	if reverse {
		valid, next = it.Last(), it.Prev
	}
	for ; valid; valid = next() {
		more, ferr := fn(it.Key(), it.Value())
		if ferr != nil {
			// fn's error comes back as it is (a caller's SQL error stays
			// one for errors.As and type checks alike).
			_ = it.Close()
			return ferr
		}
		if !more {
			return it.Close()
		}
	}
	return errors.Join(it.Error(), it.Close())
}

// DeleteRange deletes the keys in [lo, hi).
func (sc *Scratch) DeleteRange(lo, hi []byte) error {
	return sc.db.DeleteRange(lo, hi, pebble.NoSync)
}
