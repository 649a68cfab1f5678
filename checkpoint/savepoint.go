package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// ReleaseSavepoint deletes the savepoint called name. The directory is
// first renamed away (atomically, so the name is free at once and readers
// that have not opened it yet see it gone), then removed.
func ReleaseSavepoint(dir, name string) error {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return ErrNoSuchPoint
	}
	tomb := filepath.Join(dir, fmt.Sprintf(".released-%s-%d", name, time.Now().UnixNano()))
	if err := os.Rename(path, tomb); err != nil {
		if os.IsNotExist(err) {
			return ErrNoSuchPoint
		}
		return err
	}
	removeTomb(tomb)
	return nil
}

// removeTomb deletes a released directory; a reader still opening it may
// add a file meanwhile, so it retries, and leaves the rest to the next
// start (RemoveReleased).
func removeTomb(tomb string) {
	for range 5 {
		if err := os.RemoveAll(tomb); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RemoveReleased deletes leftovers of released savepoints in dir.
func RemoveReleased(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".released-") {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
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
		// Times are shown (and typed back) in microseconds.
		if m.CompletedAt.Truncate(time.Microsecond).After(t) {
			continue
		}
		if v, err := Verify(m.Dir); err == nil {
			return v, nil
		}
	}
	return nil, ErrNoSuchPoint
}
