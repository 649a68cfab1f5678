package storage

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble cannot survive a failed write to its WAL or MANIFEST: it panics
// (db.go commitWrite, rotateWAL; version_set.go logAndApply), and a WAL
// writer that saw an error stays broken. So writes of the store's own
// files that find the disk full (ENOSPC) wait and try again until they
// fit, instead of failing: Pebble stalls, it does not die, and it goes on
// when space is freed. The runtime stops committing epochs while the disk
// is below its reserve (Store.SpaceError), so this wait is the rare
// backstop for space taken between that check and the write.
//
// Files outside the store's directory (a checkpoint being written) get
// the error: a checkpoint that does not fit fails and is retried later.

// stallFS is a vfs.FS whose files under dir wait out ENOSPC.
type stallFS struct {
	vfs.FS
	dir    string
	closed atomic.Bool
	// stalled counts writes waiting for space now.
	stalled atomic.Int64
	logMu   sync.Mutex
	logged  time.Time
}

func newStallFS(inner vfs.FS, dir string) *stallFS {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return &stallFS{FS: inner, dir: filepath.Clean(abs)}
}

func (fs *stallFS) owns(name string) bool {
	abs, err := filepath.Abs(name)
	if err != nil {
		return false
	}
	return abs == fs.dir || strings.HasPrefix(abs, fs.dir+string(filepath.Separator))
}

func (fs *stallFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !fs.owns(name) {
		return f, err
	}
	return &stallFile{File: f, fs: fs, name: name}, nil
}

func (fs *stallFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	var f vfs.File
	err := fs.retry(name, func() (err error) { f, err = fs.FS.Create(name, c); return err })
	return fs.wrap(name, f, err)
}

func (fs *stallFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

func (fs *stallFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs *stallFS) Link(oldname, newname string) error {
	return fs.retry(newname, func() error { return fs.FS.Link(oldname, newname) })
}

func (fs *stallFS) Rename(oldname, newname string) error {
	return fs.retry(newname, func() error { return fs.FS.Rename(oldname, newname) })
}

func (fs *stallFS) MkdirAll(dir string, perm os.FileMode) error {
	return fs.retry(dir, func() error { return fs.FS.MkdirAll(dir, perm) })
}

// retry runs op until it does not fail with ENOSPC, for a file under dir
// and until the store closes; other files and errors return at once.
func (fs *stallFS) retry(name string, op func() error) error {
	err := op()
	if err == nil || !vfs.IsNoSpaceError(err) || !fs.owns(name) {
		return err
	}
	fs.stalled.Add(1)
	defer fs.stalled.Add(-1)
	wait := 10 * time.Millisecond
	for vfs.IsNoSpaceError(err) && !fs.closed.Load() {
		fs.note(name, err)
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
		err = op()
	}
	return err
}

// note logs a stall at most once a minute.
func (fs *stallFS) note(name string, err error) {
	fs.logMu.Lock()
	defer fs.logMu.Unlock()
	if time.Since(fs.logged) < time.Minute {
		return
	}
	fs.logged = time.Now()
	slog.Warn("state store: the disk is full; its writes wait for free space", "file", name, "err", err)
}

// stallFile is a file under the store's directory.
type stallFile struct {
	vfs.File
	fs   *stallFS
	name string
}

// Write writes all of p, waiting out ENOSPC; a short write is continued
// from where it stopped, so the file holds p once, whole.
func (f *stallFile) Write(p []byte) (int, error) {
	done := 0
	err := f.fs.retry(f.name, func() error {
		n, err := f.File.Write(p[done:])
		done += n
		return err
	})
	return done, err
}

// WriteAt writes all of p at off, waiting out ENOSPC.
func (f *stallFile) WriteAt(p []byte, off int64) (int, error) {
	done := 0
	err := f.fs.retry(f.name, func() error {
		n, err := f.File.WriteAt(p[done:], off+int64(done))
		done += n
		return err
	})
	return done, err
}

// Preallocate is optional ("implementations may choose to do nothing"):
// on a full disk the space is taken by the writes themselves, which wait.
func (f *stallFile) Preallocate(off, length int64) error {
	if err := f.File.Preallocate(off, length); err != nil && !vfs.IsNoSpaceError(err) {
		return err
	}
	return nil
}
