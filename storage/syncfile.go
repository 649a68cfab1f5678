package storage

import (
	"os"
	"path/filepath"
)

// WriteFileSynced writes data to path through a temporary file that is
// fsynced and renamed over path, then fsyncs the directory: after it
// returns, a power cut leaves either the old file or the new one, never an
// empty or torn one. The file is created with perm (less the umask) even
// where a temporary file of an earlier attempt was left. Files that a restart relies on
// (checkpoint owner files, markers, persisted settings, passwords) are
// written with it.
func WriteFileSynced(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	// A temporary file left by a crash would keep its old mode: the file
	// is made anew, with perm (less the umask).
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, so that the entries created, renamed or
// removed in it survive a power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// SyncFile fsyncs an existing file's data and metadata.
func SyncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// SyncTree fsyncs every directory under root, root itself and root's
// parent, so that every entry of the tree, and the tree's own entry, is
// durable. Files' data are not synced here: their writers sync them.
func SyncTree(root string) error {
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return SyncDir(path)
	})
	if err != nil {
		return err
	}
	return SyncDir(filepath.Dir(root))
}
