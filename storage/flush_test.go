package storage

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// bigSync is how many unsynced WAL bytes make slowSyncFS hold a sync.
const bigSync = 64 << 10

// slowSyncFS stands in for a loaded disk, on which syncing much data takes
// long: a sync of a WAL file holding at least bigSync unsynced bytes waits
// until release is closed (the first one closes blocked when it starts).
type slowSyncFS struct {
	vfs.FS
	blocked chan struct{}
	release chan struct{}
	once    sync.Once
}

func (fs *slowSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f), err
}

func (fs *slowSyncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f), err
}

func (fs *slowSyncFS) wrap(name string, f vfs.File) vfs.File {
	if f == nil || !strings.HasSuffix(name, ".log") {
		return f
	}
	return &slowSyncFile{File: f, fs: fs}
}

type slowSyncFile struct {
	vfs.File
	fs       *slowSyncFS
	unsynced atomic.Int64
}

func (f *slowSyncFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.unsynced.Add(int64(n))
	return n, err
}

func (f *slowSyncFile) Sync() error {
	f.wait()
	return f.File.Sync()
}

func (f *slowSyncFile) SyncData() error {
	f.wait()
	return f.File.SyncData()
}

func (f *slowSyncFile) SyncTo(length int64) (bool, error) {
	f.wait()
	return f.File.SyncTo(length)
}

func (f *slowSyncFile) wait() {
	if f.unsynced.Swap(0) < bigSync {
		return
	}
	f.fs.once.Do(func() { close(f.fs.blocked) })
	<-f.fs.release
}

// TestFlushLetsCommitsThroughWhileTheWALSyncs: a checkpoint flushes the
// store while epochs keep committing. The slow part of a flush, syncing
// the WAL that epochs wrote without syncing, must not hold commits (Pebble
// syncs the old WAL under its commit lock when the flush rotates it).
func TestFlushLetsCommitsThroughWhileTheWALSyncs(t *testing.T) {
	fs := &slowSyncFS{FS: vfs.NewMem(), blocked: make(chan struct{}), release: make(chan struct{})}
	s := &Store{damaged: make(chan struct{})}
	opts := s.options()
	opts.FS = fs
	db, err := pebble.Open("", opts)
	if err != nil {
		t.Fatal(err)
	}
	s.db = db
	released := false
	defer func() {
		if !released {
			close(fs.release)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()

	// Epochs leave unsynced WAL behind them.
	b := s.NewBatch()
	for i := range 1000 {
		if err := b.Set(fmt.Appendf(nil, "k%04d", i), make([]byte, 256), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush() }()
	select {
	case <-fs.blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("Flush never synced the WAL")
	}

	// The sync is under way; the next epoch commits regardless.
	committed := make(chan error, 1)
	go func() {
		b := s.NewBatch()
		if err := b.Set([]byte("next epoch"), []byte("v"), nil); err != nil {
			committed <- err
			return
		}
		committed <- s.Commit(b, false)
	}()
	select {
	case err := <-committed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an epoch commit waited for the WAL sync of a flush")
	}

	close(fs.release)
	released = true
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if n := s.db.Metrics().Flush.Count; n < 1 {
		t.Fatalf("Flush wrote %d memtables out, want at least 1", n)
	}
	for _, k := range []string{"k0999", "next epoch"} {
		if _, ok, err := s.Get([]byte(k)); err != nil || !ok {
			t.Fatalf("key %q after Flush: found %v, err %v", k, ok, err)
		}
	}
}
