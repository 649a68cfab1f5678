package storage

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
)

// SnapshotFile is the name of a full snapshot inside a checkpoint's state
// directory (memory backend).
const SnapshotFile = "snapshot.kv"

// ErrSnapshotTooLarge is returned when the memory backend's state exceeds
// its configured limit.
type ErrSnapshotTooLarge struct{ Size, Limit int64 }

func (e *ErrSnapshotTooLarge) Error() string {
	return fmt.Sprintf("state of %d bytes exceeds the memory backend's limit of %d bytes (state.backend.memory.max-size); raise the limit or use state.backend = pebble", e.Size, e.Limit)
}

// ExportSnapshot writes every key and value of the store's current state
// to dir/snapshot.kv as length-prefixed records, refusing when the total
// exceeds limit bytes (limit <= 0: no limit).
func (s *Store) ExportSnapshot(dir string, limit int64) error {
	return s.ExportSnapshotFrom(s.db, dir, limit)
}

// ExportSnapshotFrom is ExportSnapshot over a given reader (a Pebble
// snapshot pins a consistent state while writes go on).
func (s *Store) ExportSnapshotFrom(r Reader, dir string, limit int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, SnapshotFile)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var total int64
	var hdr [2 * binary.MaxVarintLen64]byte
	it, err := r.NewIter(&pebble.IterOptions{})
	if err != nil {
		f.Close()
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		total += int64(len(k) + len(v))
		if limit > 0 && total > limit {
			it.Close()
			f.Close()
			os.Remove(path)
			return &ErrSnapshotTooLarge{Size: total, Limit: limit}
		}
		n := binary.PutUvarint(hdr[:], uint64(len(k)))
		n += binary.PutUvarint(hdr[n:], uint64(len(v)))
		w.Write(hdr[:n])
		w.Write(k)
		w.Write(v)
	}
	if err := it.Close(); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ImportSnapshot loads a snapshot written by ExportSnapshot into the store.
func (s *Store) ImportSnapshot(dir string) error {
	f, err := os.Open(filepath.Join(dir, SnapshotFile))
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	b := s.db.NewBatch()
	for {
		kl, err := binary.ReadUvarint(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Close()
			return fmt.Errorf("snapshot: %w", err)
		}
		vl, err := binary.ReadUvarint(r)
		if err != nil {
			b.Close()
			return fmt.Errorf("snapshot: %w", err)
		}
		buf := make([]byte, kl+vl)
		if _, err := io.ReadFull(r, buf); err != nil {
			b.Close()
			return fmt.Errorf("snapshot truncated: %w", err)
		}
		if err := b.Set(buf[:kl], buf[kl:], nil); err != nil {
			b.Close()
			return err
		}
		if b.Len() > 64<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return err
			}
			b = s.db.NewBatch()
		}
	}
	return b.Commit(pebble.Sync)
}
