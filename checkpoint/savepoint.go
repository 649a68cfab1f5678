package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Savepoints lists the savepoints in dir (those with metadata), oldest
// first.
func Savepoints(dir string) ([]*Meta, error) {
	metas, err := List(dir)
	if err != nil {
		return nil, err
	}
	var out []*Meta
	for _, m := range metas {
		if m.Kind == KindSavepoint {
			out = append(out, m)
		}
	}
	return out, nil
}

// FindSavepoint returns the verified savepoint called name.
func FindSavepoint(dir, name string) (*Meta, error) {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, ErrNoSuchPoint
	}
	return Verify(path)
}

// ReleaseSavepoint deletes the savepoint called name.
func ReleaseSavepoint(dir, name string) error {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return ErrNoSuchPoint
	}
	return os.RemoveAll(path)
}

// ErrNoSuchPoint is returned when a named savepoint or checkpoint id does
// not exist.
var ErrNoSuchPoint = fmt.Errorf("no such savepoint or checkpoint")

// FindCheckpoint returns the verified, retained checkpoint with id.
func FindCheckpoint(dir string, id uint64) (*Meta, error) {
	path := filepath.Join(dir, fmt.Sprintf("chk-%010d", id))
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, ErrNoSuchPoint
	}
	return Verify(path)
}

// NewestAtOrBefore returns the newest retained checkpoint or savepoint
// completed at or before t, verified.
func NewestAtOrBefore(checkpointsDir, savepointsDir string, t time.Time) (*Meta, error) {
	var all []*Meta
	for _, dir := range []string{checkpointsDir, savepointsDir} {
		ms, err := List(dir)
		if err != nil {
			return nil, err
		}
		all = append(all, ms...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].CompletedAt.After(all[j].CompletedAt) })
	for _, m := range all {
		if m.CompletedAt.After(t) {
			continue
		}
		if v, err := Verify(m.Dir); err == nil {
			return v, nil
		}
	}
	return nil, ErrNoSuchPoint
}
