package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/sqlerr"
)

// FormatVersion names a format of the state a view keeps: how its
// dataflow is built from its plan, and so how its operators' state and
// source positions are numbered and encoded. The formats are the
// Dataflow* constants (catalog.go), in the way Pebble's FormatMajorVersion
// names its formats: each has a number that is stored, this binary reads
// the formats from DataflowMinSupported to DataflowLatest, and refuses
// any other (CheckFormat) instead of misreading it.
//
// A view records its format in its descriptor; the data directory records
// the newest format any view in it was created with (RatchetFormat), so
// that a binary too old for a directory refuses it as a whole.
type FormatVersion int

// formatKey holds the data directory's format: the newest of its views'.
var formatKey = metaKey("format")

// CheckFormat refuses a format this binary cannot read; what names the
// holder of the state (a view, a data directory) for the message.
func CheckFormat(what string, v FormatVersion) error {
	return checkFormatIn(what, v, DataflowMinSupported, DataflowLatest)
}

func checkFormatIn(what string, v, minV, maxV FormatVersion) error {
	switch {
	case v > maxV:
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"%s holds state in format %d, newer than this streamdb reads (formats %d to %d)", what, v, minV, maxV).
			WithHint("Start it with the streamdb release that wrote it, or a newer one.")
	case v < minV:
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"%s holds state in format %d, older than this streamdb reads (formats %d to %d)", what, v, minV, maxV).
			WithHint("Open it with a streamdb release that reads format %d, and recreate the view there (DROP and CREATE MATERIALIZED VIEW): views created by it use a format this release reads.", v)
	}
	return nil
}

// Format returns the data directory's recorded format, or false when no
// view was created in it since formats were recorded.
func (s *Store) Format() (FormatVersion, bool, error) {
	v, ok, err := s.Get(formatKey)
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, fmt.Errorf("data directory format: %d bytes, want 8", len(v))
	}
	return FormatVersion(binary.BigEndian.Uint64(v)), true, nil
}

// CheckDirFormat refuses a data directory whose recorded format this
// binary cannot read.
func (s *Store) CheckDirFormat() error {
	v, ok, err := s.Format()
	if err != nil || !ok {
		return err
	}
	return CheckFormat("the data directory", v)
}

// RatchetFormat records in b that the directory holds state of format v,
// if v is newer than what it records. The caller serialises catalog
// changes (so the read and the write do not race).
func (s *Store) RatchetFormat(b *pebble.Batch, v FormatVersion) error {
	cur, ok, err := s.Format()
	if err != nil {
		return err
	}
	if ok && cur >= v {
		return nil
	}
	return b.Set(formatKey, binary.BigEndian.AppendUint64(nil, uint64(v)), nil)
}
