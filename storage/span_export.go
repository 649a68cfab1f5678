package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// A view-group's state is moved between servers span by span: every key
// of one object lies in its state span ('s' + id) or its positions span
// ('o' + id), so a group's keys are the spans of its objects, and another
// object's key is in none of them.

// ObjectSpans are the key spans [start, end) holding every key of object
// obj: its state tables (indexes included) and its source positions, in
// key order.
func ObjectSpans(obj uint32) [][2][]byte {
	o := offsetsPrefix(obj)
	s := ObjectStatePrefix(obj)
	return [][2][]byte{{o, PrefixEnd(o)}, {s, PrefixEnd(s)}}
}

// EpochAt returns the committed epoch a snapshot holds.
func EpochAt(snap *pebble.Snapshot) (uint64, error) {
	v, closer, err := snap.Get(metaKey("epoch"))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("epoch: bad value length %d", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// ExportSpan writes every key of r in [start, end) to a new sstable at
// path (on the local disk) and returns how many keys it holds; with none
// it writes no file. Only live values are written, so the file holds
// exactly the span's keys as r sees them.
func (s *Store) ExportSpan(r Reader, start, end []byte, path string) (int64, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var w *sstable.Writer
	var f vfs.File
	var keys int64
	for it.First(); it.Valid(); it.Next() {
		if w == nil {
			if f, err = vfs.Default.Create(path, vfs.WriteCategoryUnspecified); err != nil {
				return 0, err
			}
			w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), s.opts.MakeWriterOptions(0, s.db.FormatMajorVersion().MaxTableFormat()))
		}
		v, err := it.ValueAndErr()
		if err == nil {
			err = w.Set(it.Key(), v)
		}
		if err != nil {
			w.Close()
			os.Remove(path)
			return 0, err
		}
		keys++
	}
	if err := it.Error(); err != nil {
		if w != nil {
			w.Close()
			os.Remove(path)
		}
		return 0, err
	}
	if w == nil {
		return 0, nil
	}
	if err := w.Close(); err != nil {
		os.Remove(path)
		return 0, err
	}
	return keys, SyncFile(path)
}

// ReplaceSpan replaces every key in [start, end) by the keys of the
// sstable at path (none when path is ""), atomically: readers see the
// span either as it was or as the file holds it. The file must hold keys
// of the span only. Pebble links or copies the file in; it stays where it
// is.
func (s *Store) ReplaceSpan(start, end []byte, path string) error {
	// Excising needs virtual sstables, a format newer than Pebble's
	// default: move the store to it once, on its first replaced span.
	if s.db.FormatMajorVersion() < pebble.FormatMinForSharedObjects {
		if err := s.db.RatchetFormatMajorVersion(pebble.FormatMinForSharedObjects); err != nil {
			return fmt.Errorf("move the state store to a format that can replace spans: %w", err)
		}
	}
	span := pebble.KeyRange{Start: start, End: end}
	if path == "" {
		return s.db.Excise(context.Background(), span)
	}
	// Pebble may move the file it ingests: give it a link of its own.
	link := path + ".ingest"
	os.Remove(link)
	if err := os.Link(path, link); err != nil {
		if err := CopyFile(path, link); err != nil {
			return err
		}
	}
	defer os.Remove(link)
	_, err := s.db.IngestAndExcise(context.Background(), []string{link}, nil, nil, span)
	return err
}
