// Package storage keeps all of streamdb's durable state in one Pebble
// database: the catalog, the state tables of operators (a view is its final
// operator's table) and the source positions of the last committed epoch.
// Each epoch is written as one atomic batch, so Pebble always holds whole
// epochs and a Pebble checkpoint is a consistent cut of the system.
package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Key spaces. Every key starts with one of these bytes.
const (
	prefixCatalog = 'c' // 'c' + object name -> JSON descriptor
	prefixMeta    = 'm' // 'm' + name -> value
	prefixOffsets = 'o' // 'o' + object id + source index -> SourcePosition
	prefixState   = 's' // 's' + object id + operator index + key -> value
	prefixSink    = 'k' // 'k' + sink name -> JSON SinkDescriptor
	prefixOutbox  = 'x' // 'x' + sink id + ... -> a sink's outbox (sinks.go)
)

// Store is the Pebble database of one server.
type Store struct {
	db      *pebble.DB
	memory  bool
	cleanup func() // after Close, for read-only opens
	// dir and fs are the directory of an on-disk store and its files,
	// which wait out a full disk (stallfs.go); nil for other stores.
	dir string
	fs  *stallFS
	// damage is the first corruption Pebble found in the store's files
	// (a checksum mismatch in a compaction or a read); damaged is closed
	// then. A damaged store must not go on committing epochs: the server
	// recovers from its newest intact checkpoint instead (node).
	// opts are the options the database was opened with (nil for
	// read-only opens): CommitSpilled writes sstables with them.
	opts       *pebble.Options
	damageOnce sync.Once
	damage     error
	damaged    chan struct{}
}

// Damaged is closed once Pebble has found corrupt data in the store's
// files; Damage says what.
func (s *Store) Damaged() <-chan struct{} { return s.damaged }

// Damage returns the corruption that closed Damaged, or nil.
func (s *Store) Damage() error {
	select {
	case <-s.damaged:
		return s.damage
	default:
		return nil
	}
}

// reportDamage is Pebble's DataCorruption event: it records the first
// corruption instead of Pebble's default, a fatal log line (a panic here,
// in a compaction goroutine, at every start).
func (s *Store) reportDamage(info pebble.DataCorruptionInfo) {
	s.damageOnce.Do(func() {
		s.damage = fmt.Errorf("%s is damaged: %v", info.Path, info.Details)
		slog.Error("state store: on-disk corruption", "file", info.Path, "err", info.Details)
		close(s.damaged)
	})
}

// Open opens (or creates) the Pebble database in dir.
func Open(dir string) (*Store, error) {
	fs := newStallFS(vfs.Default, dir)
	s := &Store{dir: dir, fs: fs, damaged: make(chan struct{})}
	opts := s.options()
	opts.FS = fs
	removeStaleSpills(dir)
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open state store %s: %w", dir, err)
	}
	s.db = db
	s.opts = opts.Clone()
	s.opts.EnsureDefaults()
	return s, nil
}

// IsCorruption reports whether err says that the store's files are
// damaged (a checksum mismatch, a torn manifest).
func IsCorruption(err error) bool { return pebble.IsCorruptionError(err) }

// SpaceError returns a *DiskFullError while the disk holding the store
// has less than its reserve free, or one of its writes waits for space:
// epochs are not committed then (see stallfs.go). nil for other stores.
func (s *Store) SpaceError() error {
	if s.fs == nil {
		return nil
	}
	err := CheckSpace(s.dir, "the state store")
	if err == nil && s.fs.stalled.Load() > 0 {
		free, total, _ := DiskSpace(s.dir)
		err = &DiskFullError{Dir: s.dir, What: "the state store", Free: free, Reserve: ReserveFor(total)}
	}
	return err
}

// OpenMemory opens a store that keeps everything in memory (the memory
// state backend); checkpoints of it are full snapshots (ExportSnapshot).
func OpenMemory() (*Store, error) {
	s := &Store{memory: true, damaged: make(chan struct{})}
	opts := s.options()
	opts.FS = vfs.NewMem()
	db, err := pebble.Open("", opts)
	if err != nil {
		return nil, fmt.Errorf("open in-memory state store: %w", err)
	}
	s.db = db
	s.opts = opts.Clone()
	s.opts.EnsureDefaults()
	return s, nil
}

// pebbleLogger keeps Pebble's informational chatter (WAL replay, ...) out
// of the server log and passes its errors to slog.
type pebbleLogger struct{}

func (pebbleLogger) Infof(string, ...any) {}
func (pebbleLogger) Errorf(format string, args ...any) {
	slog.Warn("pebble: " + fmt.Sprintf(format, args...))
}
func (pebbleLogger) Fatalf(format string, args ...any) {
	slog.Error("pebble: " + fmt.Sprintf(format, args...))
	panic(fmt.Sprintf("pebble: "+format, args...))
}

func (s *Store) options() *pebble.Options {
	opts := &pebble.Options{MemTableSize: 64 << 20, Logger: pebbleLogger{}, Cache: sharedBlockCache(),
		EventListener: &pebble.EventListener{DataCorruption: s.reportDamage}}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return opts
}

// Memory reports whether the store is the memory backend.
func (s *Store) Memory() bool { return s.memory }

// Checkpoint writes a Pebble checkpoint of the store to dir, which must not
// exist: sstables are hard-linked, the WAL is copied up to the newest
// committed batch.
func (s *Store) Checkpoint(dir string) error {
	return s.db.Checkpoint(dir, pebble.WithFlushedWAL())
}

// Flush writes the memtable out to an sstable, so that a checkpoint taken
// next copies little WAL. It syncs the WAL first: Pebble's flush rotates
// the WAL, and the rotation syncs the old file while holding the commit
// lock, so every epoch commit would wait for that fsync. Synced
// beforehand, while commits go on, the rotation finds almost nothing left
// to write.
func (s *Store) Flush() error {
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return err
	}
	return s.db.Flush()
}

// Close closes the database. While a write waits for space the database
// is left open instead (closing would fail that write, which Pebble does
// not survive): the process is ending, and the next start recovers what
// the WAL holds, as after a crash. Writes that find the disk full during
// Close give up.
func (s *Store) Close() error {
	if s.fs != nil {
		if s.fs.stalled.Load() > 0 {
			return fmt.Errorf("state store left open: %w", s.SpaceError())
		}
		s.fs.closed.Store(true)
	}
	err := s.db.Close()
	if s.cleanup != nil {
		s.cleanup()
	}
	return err
}

// DB is the Pebble database itself: operators read and write their state
// tables in it (under keys built by this package), checkpoints copy it, and
// the metrics read its figures.
func (s *Store) DB() *pebble.DB { return s.db }

// NewBatch returns a write batch for one epoch's changes.
func (s *Store) NewBatch() *pebble.Batch { return s.db.NewBatch() }

// Commit applies b atomically. sync asks for the WAL to reach disk.
func (s *Store) Commit(b *pebble.Batch, sync bool) error {
	opts := pebble.NoSync
	if sync {
		opts = pebble.Sync
	}
	return b.Commit(opts)
}

// Get returns a copy of the value stored at key, or nil, false.
func (s *Store) Get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, true, nil
}

// Reader is a consistent point-in-time view of the store.
type Reader interface {
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// Snapshot returns a consistent view of the newest committed epoch; Close it
// when done.
func (s *Store) Snapshot() *pebble.Snapshot { return s.db.NewSnapshot() }

// ScanPrefix calls fn for each key with the given prefix in key order, on r.
// The slices passed to fn are only valid during the call.
func ScanPrefix(r Reader, prefix []byte, fn func(key, value []byte) error) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: PrefixEnd(prefix)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// HasPrefix reports whether r holds any key with the given prefix.
func HasPrefix(r Reader, prefix []byte) (bool, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: PrefixEnd(prefix)})
	if err != nil {
		return false, err
	}
	found := it.First()
	if err := it.Error(); err != nil {
		it.Close()
		return false, err
	}
	return found, it.Close()
}

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// StatePrefix is the key prefix of operator op's state table in object obj.
// Operator index 0 is the object's own table (a view's rows).
func StatePrefix(obj uint32, op uint16) []byte {
	b := make([]byte, 0, 16)
	b = append(b, prefixState)
	b = binary.BigEndian.AppendUint32(b, obj)
	return binary.BigEndian.AppendUint16(b, op)
}

// ObjectStatePrefix covers every state table of obj.
func ObjectStatePrefix(obj uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefixState}, obj)
}

// DeleteObject removes all state and source positions of obj in b.
func DeleteObject(b *pebble.Batch, obj uint32) error {
	p := ObjectStatePrefix(obj)
	if err := b.DeleteRange(p, PrefixEnd(p), nil); err != nil {
		return err
	}
	o := offsetsPrefix(obj)
	return b.DeleteRange(o, PrefixEnd(o), nil)
}

func metaKey(name string) []byte { return append([]byte{prefixMeta}, name...) }
