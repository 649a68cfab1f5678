package storage

import (
	"io"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// fullFS is a memory filesystem whose writes fail with ENOSPC, after
// writing half of what they were given, while full is set.
type fullFS struct {
	vfs.FS
	full atomic.Bool
}

func (fs *fullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return &fullFile{File: f, fs: fs}, err
}

type fullFile struct {
	vfs.File
	fs *fullFS
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.fs.full.Load() {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func TestStallFSWaitsOutFullDisk(t *testing.T) {
	inner := &fullFS{FS: vfs.NewMem()}
	if err := inner.MkdirAll("/store", 0o755); err != nil {
		t.Fatal(err)
	}
	fs := newStallFS(inner, "/store")
	inner.full.Store(true)

	// Outside the store's directory the error comes back at once.
	out, err := fs.Create("/checkpoint", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write([]byte("abcd")); !vfs.IsNoSpaceError(err) {
		t.Fatalf("write outside the store: want ENOSPC, got %v", err)
	}

	f, err := fs.Create("/store/000001.log", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	const wantText = "0123456789abcdef"
	// Write gets its own copy: Pebble's memory filesystem scribbles over a
	// written buffer in invariant (race) builds, to catch callers that
	// reuse it.
	want := []byte(wantText)
	done := make(chan error, 1)
	go func() {
		n, err := f.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for fs.stalled.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the write did not wait for space")
		}
		time.Sleep(time.Millisecond) // poll interval, under the deadline above
	}
	select {
	case err := <-done:
		t.Fatalf("write returned on a full disk: %v", err)
	default:
	}
	inner.full.Store(false)
	if err := <-done; err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
	if fs.stalled.Load() != 0 {
		t.Fatal("stall count not released")
	}
	// The file holds the bytes once, whole, though the first attempt
	// wrote half of them.
	r, err := inner.Open("/store/000001.log")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	if string(got) != wantText {
		t.Fatalf("file holds %q, want %q", got, wantText)
	}
}
