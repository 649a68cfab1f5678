// Package checkpoint takes, keeps and restores consistent snapshots of all
// state. Because every epoch reaches Pebble as one atomic batch holding the
// changes of every view and every source position, a Pebble checkpoint
// taken between two epoch commits is one consistent cut across all sources
// and views (the aligned-barrier snapshot of Flink, with the barrier
// alignment done by the runtime). A checkpoint directory holds:
//
//	state/          the Pebble checkpoint (sstables hard-linked, so
//	                checkpoints share immutable files: incremental)
//	_metadata.json  id, epoch, times, trigger, sizes, source positions and a
//	                CRC-32C of every file; written last by atomic rename, so
//	                it is the commit marker
//
// A directory without _metadata.json, or whose files do not match their
// recorded sizes and checksums, is not usable and is skipped on recovery.
package checkpoint

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"streamdb/storage"
)

// FormatVersion is written into every checkpoint's metadata; restore
// refuses versions it does not know.
const FormatVersion = 1

// MetadataFile is the commit marker and description of a checkpoint.
const MetadataFile = "_metadata.json"

// StateDir is the subdirectory that holds the Pebble checkpoint.
const StateDir = "state"

// Kinds of snapshots.
const (
	KindCheckpoint = "checkpoint"
	KindSavepoint  = "savepoint"
)

// Triggers of checkpoints.
const (
	TriggerPeriodic = "periodic"
	TriggerManual   = "manual"
	TriggerDDL      = "ddl"
	TriggerShutdown = "shutdown"
)

// Statuses of checkpoints.
const (
	StatusInProgress = "in progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusAborted    = "aborted"
)

// Position is one source position captured by a checkpoint.
type Position struct {
	View    string `json:"view"`
	Source  int    `json:"source"`
	Stream  string `json:"stream"`
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
}

// File is one file of a checkpoint with its size and CRC-32C.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
	// Shared is true when the previous checkpoint held the same file (a
	// hard link to the same immutable sstable).
	Shared bool `json:"shared,omitempty"`
}

// Meta describes a checkpoint or savepoint.
type Meta struct {
	FormatVersion int       `json:"format_version"`
	Kind          string    `json:"kind"`
	ID            uint64    `json:"id"`
	Name          string    `json:"name,omitempty"` // savepoints
	Epoch         uint64    `json:"epoch"`
	Trigger       string    `json:"trigger"`
	Status        string    `json:"status"`
	Backend       string    `json:"backend"`
	StartedAt     time.Time `json:"started_at"`
	CompletedAt   time.Time `json:"completed_at"`
	Duration      Duration  `json:"duration"`
	// Pause is how long epoch commits waited for the checkpoint (the time
	// spent at the epoch boundary); processing itself does not stop.
	Pause     Duration   `json:"pause"`
	SizeBytes int64      `json:"size_bytes"`
	NewBytes  int64      `json:"new_bytes"` // bytes not shared with the previous checkpoint
	Positions []Position `json:"positions"`
	Files     []File     `json:"files"`
	Error     string     `json:"error,omitempty"`
	// Instance is the id of the server that made it (see RecordFile).
	Instance string `json:"instance,omitempty"`
	Dir      string `json:"-"`
	// Location is where the checkpoint is kept for restores elsewhere:
	// its metadata object in a bucket (nats-object://...), or "" when it
	// is in Dir only.
	Location string `json:"-"`
}

// Duration marshals as milliseconds.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(float64(d) / float64(time.Millisecond))
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*d = Duration(ms * float64(time.Millisecond))
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileCRC computes the CRC-32C and size of a file.
func fileCRC(path string) (uint32, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	return h.Sum32(), n, err
}

// writeMeta writes m as dir/_metadata.json atomically: a temporary file,
// fsync, rename, fsync of the directory. Until the rename the checkpoint
// does not exist for readers.
func writeMeta(dir string, m *Meta) error {
	return writeJSONAtomic(dir, MetadataFile, m)
}

// writeJSONAtomic writes v as dir/name: a temporary file, fsync, rename,
// fsync of the directory (storage.WriteFileSynced).
func writeJSONAtomic(dir, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return storage.WriteFileSynced(filepath.Join(dir, name), data, 0o644)
}

// ReadMeta reads a checkpoint's metadata without verifying its files.
func ReadMeta(dir string) (*Meta, error) {
	data, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		return nil, err
	}
	m := new(Meta)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%s: damaged metadata: %w", dir, err)
	}
	m.Dir = dir
	return m, nil
}

// Verify checks that a checkpoint is complete and undamaged: a known format
// version, and every recorded file present with its size and checksum.
func Verify(dir string) (*Meta, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: no %s (a checkpoint that never completed): %w", dir, MetadataFile, os.ErrNotExist)
		}
		return nil, err
	}
	if err := checkMetaFormat(m.FormatVersion); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	for _, f := range m.Files {
		crc, size, err := fileCRC(filepath.Join(dir, f.Name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if size != f.Size || crc != f.CRC32C {
			return nil, fmt.Errorf("%s: file %s is damaged (size %d, want %d; crc %08x, want %08x)", dir, f.Name, size, f.Size, crc, f.CRC32C)
		}
	}
	return m, nil
}

// checkMetaFormat refuses a checkpoint whose metadata format this binary
// does not read, saying which release can: one written by a newer
// streamdb is never misread as damaged or as an older point.
func checkMetaFormat(v int) error {
	switch {
	case v > FormatVersion:
		return fmt.Errorf("checkpoint format %d is newer than this streamdb reads (format %d); restore it with the streamdb release that wrote it, or a newer one", v, FormatVersion)
	case v < FormatVersion:
		return fmt.Errorf("checkpoint format %d is older than this streamdb reads (format %d); restore it with a streamdb release that reads format %d and take a new savepoint there", v, FormatVersion, v)
	}
	return nil
}
