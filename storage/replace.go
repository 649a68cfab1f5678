package storage

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// OpenReadOnly opens the Pebble state of a checkpoint or savepoint for
// reading (AS OF queries, rollback). memory selects a full-snapshot
// (memory backend) checkpoint, loaded into an in-memory store.
func OpenReadOnly(stateDir string, memory bool) (*Store, error) {
	if memory {
		s, err := OpenMemory()
		if err != nil {
			return nil, err
		}
		if err := s.ImportSnapshot(stateDir); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	// Each read-only open works on a private directory of hard links to
	// the point's files: Pebble refuses a second open of one path in a
	// process, and a savepoint may be released (its directory deleted)
	// while a reader still uses it. The links keep the files alive until
	// the reader closes. They live beside the point (same file system),
	// in a dot-directory that listings skip.
	private, err := os.MkdirTemp(filepath.Dir(filepath.Dir(filepath.Clean(stateDir))), ".ro-")
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		os.RemoveAll(private)
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "LOCK" {
			continue
		}
		from, to := filepath.Join(stateDir, e.Name()), filepath.Join(private, e.Name())
		if err := os.Link(from, to); err != nil {
			if err := CopyFile(from, to); err != nil {
				os.RemoveAll(private)
				return nil, err
			}
		}
	}
	s := &Store{cleanup: func() { os.RemoveAll(private) }, damaged: make(chan struct{})}
	opts := s.options()
	opts.ReadOnly = true
	db, err := pebble.Open(private, opts)
	if err != nil {
		os.RemoveAll(private)
		return nil, err
	}
	s.db = db
	return s, nil
}

// RemovePrivateOpens deletes the private directories of read-only opens
// left by a crash, under dir.
func RemovePrivateOpens(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".ro-") {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// CopyFile copies a file and syncs the copy.
func CopyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ReplaceAll makes the store's content exactly that of from, in one atomic
// batch: readers see either the old state or the new one. The epoch
// counter is set to epoch so that epoch numbers keep increasing.
func (s *Store) ReplaceAll(from *Store, epoch uint64) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange([]byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, nil); err != nil {
		return err
	}
	it, err := from.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := b.Set(it.Key(), it.Value(), nil); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if err := PutEpoch(b, epoch); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}
