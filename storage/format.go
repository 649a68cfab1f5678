package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
)

// formatKey holds the data directory's format: the newest of its views'.
var formatKey = metaKey("format")

// Format returns the data directory's recorded format, or false when no
// view was created in it since formats were recorded.
func (s *Store) Format() (catalog.FormatVersion, bool, error) {
	v, ok, err := s.Get(formatKey)
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, fmt.Errorf("data directory format: %d bytes, want 8", len(v))
	}
	return catalog.FormatVersion(binary.BigEndian.Uint64(v)), true, nil
}

// CheckDirFormat refuses a data directory whose recorded format this
// binary can neither read nor move forward (catalog.CheckMigratable); its
// views are checked one by one once they have moved.
func (s *Store) CheckDirFormat() error {
	v, ok, err := s.Format()
	if err != nil || !ok {
		return err
	}
	return catalog.CheckMigratable("the data directory", v)
}

// RatchetFormat records in b that the directory holds state of format v,
// if v is newer than what it records. The caller serialises catalog
// changes (so the read and the write do not race).
func (s *Store) RatchetFormat(b *pebble.Batch, v catalog.FormatVersion) error {
	cur, ok, err := s.Format()
	if err != nil {
		return err
	}
	if ok && cur >= v {
		return nil
	}
	return b.Set(formatKey, binary.BigEndian.AppendUint64(nil, uint64(v)), nil)
}
