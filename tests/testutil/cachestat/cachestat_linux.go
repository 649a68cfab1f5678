//go:build linux

// Package cachestat measures what of a JetStream stream is written but not
// yet on disk. It is apart from testutil so that package broker's own
// tests, which testutil imports, can use it too.
package cachestat

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// DirtyPages returns the page-cache pages of a JetStream stream's message
// blocks, under streamsDir (the store's directory of streams), that are
// written but not yet on disk, by cachestat(2): 0 right after an fsync,
// more after a write that was not fsynced. The test is skipped on a
// kernel without cachestat (before Linux 6.5).
func DirtyPages(t testing.TB, streamsDir, stream string) uint64 {
	t.Helper()
	blks, err := filepath.Glob(filepath.Join(streamsDir, stream, "msgs", "*.blk"))
	if err != nil || len(blks) == 0 {
		t.Fatalf("no message blocks of JetStream stream %s under %s (%v)", stream, streamsDir, err)
	}
	var dirty uint64
	for _, p := range blks {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Cachestat_t
		err = unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &st, 0)
		f.Close()
		if errors.Is(err, unix.ENOSYS) {
			t.Skip("cachestat(2) needs Linux 6.5 or later")
		}
		if err != nil {
			t.Fatalf("cachestat %s: %v", p, err)
		}
		dirty += st.Dirty
	}
	return dirty
}
