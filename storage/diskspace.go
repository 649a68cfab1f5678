package storage

import (
	"errors"
	"fmt"
	"syscall"

	"streamdb/sqlerr"
)

// A full disk is a state the server lives through, not a crash: writes
// are refused (53100) or wait while the filesystem holding a directory has
// less than its reserve free, and go on by themselves once it has more.
// The reserve is kept so that the writes that cannot be refused cleanly
// (Pebble's WAL and MANIFEST, JetStream's message blocks, whose write
// errors are fatal to them) still find room while the writes that can be
// refused are refused.

// ReserveFor is the space kept free on a filesystem of total bytes: a
// twentieth of it, at least 1 MiB and at most 256 MiB.
func ReserveFor(total uint64) uint64 {
	return min(max(total/20, 1<<20), 256<<20)
}

// DiskSpace is the free and total space of the filesystem holding dir.
func DiskSpace(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// DiskFullError says that the filesystem holding Dir has less than its
// reserve free. Its message names what Dir holds, not the path, since it
// goes to clients.
type DiskFullError struct {
	Dir           string
	What          string // "the state store", "JetStream's store"
	Free, Reserve uint64
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("the disk holding %s is full (%s free, %s kept in reserve)", e.What, mib(e.Free), mib(e.Reserve))
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// CheckSpace returns a *DiskFullError when the filesystem holding dir
// (which holds what) has less than its reserve free; nil when it has
// more, or when it cannot be asked (the write then meets the
// filesystem's own answer).
func CheckSpace(dir, what string) error {
	free, total, err := DiskSpace(dir)
	if err != nil {
		return nil
	}
	if r := ReserveFor(total); free < r {
		return &DiskFullError{Dir: dir, What: what, Free: free, Reserve: r}
	}
	return nil
}

func init() {
	sqlerr.Classify(func(err error) *sqlerr.Error {
		var full *DiskFullError
		switch {
		case errors.As(err, &full):
			return sqlerr.New(sqlerr.DiskFull, "could not write: %s", full.Error()).
				WithHint("Free space on that disk; writes and views go on by themselves once there is room, and nothing acknowledged is lost.")
		case errors.Is(err, syscall.ENOSPC):
			// A file the server writes (a checkpoint, a savepoint) did
			// not fit; the path stays in the server's log.
			return sqlerr.New(sqlerr.DiskFull, "could not write: no space left on the device").
				WithHint("Free space on the disk holding the data, checkpoint or savepoint directory, then retry.")
		}
		return nil
	})
}
