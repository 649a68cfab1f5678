package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"streamdb/storage"
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

// MaxSavepointNameLen is the longest savepoint name, in bytes
// (PostgreSQL's identifier limit).
const MaxSavepointNameLen = 63

// NameError says why a savepoint name was refused.
type NameError struct {
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	name := e.Name
	if len(name) > MaxSavepointNameLen+8 {
		name = name[:MaxSavepointNameLen] + "..."
	}
	return fmt.Sprintf("invalid savepoint name %q: %s", name, e.Reason)
}

// CheckSavepointName refuses names that are not plain identifiers: a
// savepoint name becomes one directory name under state.savepoints.dir and
// must never be a path (no separators, no "." or "..", nothing hidden,
// nothing the terminal or the file system would read specially).
func CheckSavepointName(name string) error {
	reason := ""
	switch {
	case name == "":
		reason = "it is empty"
	case len(name) > MaxSavepointNameLen:
		reason = fmt.Sprintf("it is longer than %d bytes", MaxSavepointNameLen)
	case !utf8.ValidString(name):
		reason = "it is not valid UTF-8"
	case strings.HasPrefix(name, "."):
		reason = "it starts with a dot (such names are the server's own)"
	case strings.ContainsAny(name, `/\`):
		reason = "it contains a slash or backslash"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		reason = "it contains a control character"
	}
	if reason != "" {
		return &NameError{Name: name, Reason: reason}
	}
	return nil
}

// SavepointPath returns the directory of the savepoint called name under
// root. It refuses a name that is not an identifier (a *NameError) and,
// as a second line of defence, any path that is not a direct child of
// root or that resolves (through symbolic links) outside it: those are
// ErrNoSuchPoint, so an answer never tells whether something outside the
// root exists.
func SavepointPath(root, name string) (string, error) {
	if err := CheckSavepointName(name); err != nil {
		return "", err
	}
	return childOf(root, name)
}

// childOf returns root/name if that is a direct child of root that does
// not resolve (through symbolic links) outside root; ErrNoSuchPoint
// otherwise.
func childOf(root, name string) (string, error) {
	root = filepath.Clean(root)
	path := filepath.Join(root, name)
	if filepath.Dir(path) != root || !Within(path, root) {
		return "", ErrNoSuchPoint
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		realRoot, rerr := filepath.EvalSymlinks(root)
		if rerr != nil || !Within(real, realRoot) || absDir(real) == absDir(realRoot) {
			return "", ErrNoSuchPoint
		}
	}
	return path, nil
}

// FindSavepoint returns the verified savepoint called name.
func FindSavepoint(dir, name string) (*Meta, error) {
	path, err := SavepointPath(dir, name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, ErrNoSuchPoint
	}
	if !isSavepointDir(path) {
		return nil, ErrNoSuchPoint
	}
	return Verify(path)
}

// isSavepointDir reports whether path is a savepoint: its metadata says
// so, or (one that never completed) the server's owner file is there.
// Anything else in the savepoints directory is not the server's to read
// or delete.
func isSavepointDir(path string) bool {
	if m, err := ReadMeta(path); err == nil {
		return m.Kind == KindSavepoint
	}
	fi, err := os.Lstat(filepath.Join(path, OwnerFile))
	return err == nil && fi.Mode().IsRegular()
}

// ReleasedMarker, inside a released savepoint's renamed directory, holds
// that directory's name: the startup cleanup (RemoveReleased) deletes
// only directories that carry it, i.e. that the server renamed itself.
const ReleasedMarker = "_released"

// releasedPrefix starts the name of a released savepoint's directory.
const releasedPrefix = ".released-"

// ReleaseSavepoint deletes the savepoint called name. The directory is
// first renamed away (atomically, so the name is free at once and readers
// that have not opened it yet see it gone), then removed. Only a
// savepoint is deleted: a name that is no identifier is a *NameError,
// and anything under root that is not a savepoint is ErrNoSuchPoint.
func ReleaseSavepoint(dir, name string) error {
	path, err := SavepointPath(dir, name)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return ErrNoSuchPoint
	}
	if err != nil {
		return err
	}
	tombName := fmt.Sprintf("%s%s-%d", releasedPrefix, name, time.Now().UnixNano())
	tomb := filepath.Join(filepath.Clean(dir), tombName)
	if fi.Mode()&os.ModeSymlink != 0 {
		// A link placed by hand to a savepoint inside the root: remove
		// the link, never what it points to.
		if !isSavepointDir(path) {
			return ErrNoSuchPoint
		}
		if err := os.Remove(path); err != nil {
			if os.IsNotExist(err) {
				return ErrNoSuchPoint
			}
			return err
		}
		return nil
	}
	if !fi.IsDir() || !isSavepointDir(path) {
		return ErrNoSuchPoint
	}
	// The marker goes in before the rename, so a crash never leaves a
	// renamed directory the cleanup would not recognise.
	marker := filepath.Join(path, ReleasedMarker)
	if err := storage.WriteFileSynced(marker, []byte(tombName), 0o644); err != nil {
		if os.IsNotExist(err) {
			return ErrNoSuchPoint
		}
		return err
	}
	if err := os.Rename(path, tomb); err != nil {
		os.Remove(marker)
		if os.IsNotExist(err) {
			return ErrNoSuchPoint
		}
		return err
	}
	// RELEASE is acknowledged: the rename must survive a power cut, or
	// the savepoint would come back.
	if err := storage.SyncDir(dir); err != nil {
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

// RemoveReleased deletes leftovers of released savepoints in dir: only
// real directories named .released-* whose ReleasedMarker holds their own
// name, i.e. the ones ReleaseSavepoint renamed. Anything else (a
// directory someone else put there, a link) is left alone.
func RemoveReleased(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), releasedPrefix) || e.Type() != fs.ModeDir {
			continue
		}
		path := filepath.Join(dir, e.Name())
		marker := filepath.Join(path, ReleasedMarker)
		if fi, err := os.Lstat(marker); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if data, err := os.ReadFile(marker); err != nil || string(data) != e.Name() {
			continue
		}
		os.RemoveAll(path)
	}
}

// ErrNoSuchPoint is returned when a named savepoint or checkpoint id does
// not exist.
var ErrNoSuchPoint = fmt.Errorf("no such savepoint or checkpoint")

// FindCheckpoint returns the verified, retained checkpoint with id.
func FindCheckpoint(dir string, id uint64) (*Meta, error) {
	path, err := childOf(dir, fmt.Sprintf("chk-%010d", id))
	if err != nil {
		return nil, err
	}
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
