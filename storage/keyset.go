package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// KeySets are sets of byte keys that one statement builds and asks, one
// key at a time, and that may grow larger than memory should hold (the
// unique keys of the rows a bulk insert has written so far). The newest
// keys are in a map of at most keySetMemBytes; past that they move into a
// private Pebble database in a directory of the store's (the system's
// temporary directory for the memory backend), opened only then and
// removed by Close; a crash leaves it to the next Open to remove. It has
// no WAL: nothing in it outlives the statement.
//
// Each set also keeps the smallest and largest key added: a key outside
// that range is not in the set, so keys that arrive in increasing order
// (sorted loads) are never looked up.
type KeySets struct {
	parent string
	sets   []keySet
	mem    int // bytes of keys in the sets' maps
	limit  int // the most bytes in the maps: keySetMemBytes
	db     *pebble.DB
	dir    string
}

type keySet struct {
	mem    map[string]struct{}
	lo, hi []byte
	n      int
}

// keySetMemBytes is the most bytes held in the maps before they move into
// the database, counting keySetEntryBytes for each entry's own cost (the
// string header and the map's slot) besides the key.
const (
	keySetMemBytes   = 8 << 20
	keySetEntryBytes = 64
)

// NewKeySets returns n empty sets, numbered from 0.
func (s *Store) NewKeySets(n int) *KeySets {
	parent := s.dir
	if parent == "" {
		parent = os.TempDir()
	}
	ks := &KeySets{parent: parent, sets: make([]keySet, n), limit: keySetMemBytes}
	for i := range ks.sets {
		ks.sets[i].mem = map[string]struct{}{}
	}
	return ks
}

// Has reports whether key is in set i.
func (ks *KeySets) Has(i int, key []byte) (bool, error) {
	s := &ks.sets[i]
	if s.n == 0 || bytes.Compare(key, s.lo) < 0 || bytes.Compare(key, s.hi) > 0 {
		return false, nil
	}
	if _, ok := s.mem[string(key)]; ok {
		return true, nil
	}
	if ks.db == nil {
		return false, nil
	}
	_, closer, err := ks.db.Get(ks.dbKey(i, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read a statement's key set: %w", err)
	}
	return true, closer.Close()
}

// Add puts key into set i.
func (ks *KeySets) Add(i int, key []byte) error {
	s := &ks.sets[i]
	if s.n == 0 || bytes.Compare(key, s.lo) < 0 {
		s.lo = append(s.lo[:0], key...)
	}
	if s.n == 0 || bytes.Compare(key, s.hi) > 0 {
		s.hi = append(s.hi[:0], key...)
	}
	s.n++
	if _, ok := s.mem[string(key)]; ok {
		return nil
	}
	s.mem[string(key)] = struct{}{}
	ks.mem += len(key) + keySetEntryBytes
	if ks.mem < ks.limit {
		return nil
	}
	return ks.spill()
}

func (ks *KeySets) dbKey(i int, key []byte) []byte {
	return append([]byte{byte(i >> 8), byte(i)}, key...)
}

// spill moves the keys of the maps into the database.
func (ks *KeySets) spill() error {
	if ks.db == nil {
		dir, err := os.MkdirTemp(ks.parent, "keyset-")
		if err != nil {
			return fmt.Errorf("keep a statement's keys: %w", err)
		}
		opts := &pebble.Options{FS: vfs.Default, DisableWAL: true, MemTableSize: 16 << 20, Logger: pebbleLogger{}}
		for l := range opts.Levels {
			opts.Levels[l].FilterPolicy = bloom.FilterPolicy(10)
		}
		db, err := pebble.Open(dir, opts)
		if err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("keep a statement's keys: %w", err)
		}
		ks.db, ks.dir = db, dir
	}
	b := ks.db.NewBatch()
	defer b.Close()
	for i := range ks.sets {
		for k := range ks.sets[i].mem {
			if err := b.Set(ks.dbKey(i, []byte(k)), nil, nil); err != nil {
				return err
			}
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("keep a statement's keys: %w", err)
	}
	for i := range ks.sets {
		ks.sets[i].mem = map[string]struct{}{}
	}
	ks.mem = 0
	return nil
}

// Close drops the sets and removes their database.
func (ks *KeySets) Close() {
	if ks.db != nil {
		ks.db.Close()
		os.RemoveAll(ks.dir)
		ks.db = nil
	}
	ks.sets = nil
}
