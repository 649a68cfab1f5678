package exec

import (
	"sync"
	"time"
)

// On a full disk the runtime stops committing epochs instead of failing
// them: before each commit it asks the store whether its disk is below
// its reserve (storage.Store.SpaceError). While it is, epochs stay
// pending, so views pause (at most maxInflight epochs are injected) and
// their last committed state stays readable; each barrier tick asks
// again, and once space is freed the pending epochs commit in order and
// the views go on. Nothing is lost meanwhile: sources resume from the
// last committed positions after a restart, as always.

// diskStall is the runtime's full-disk state.
type diskStall struct {
	mu    sync.Mutex
	err   error     // the store's answer while commits are held
	since time.Time // when they began to be held
}

// holdForSpace reports whether epochs must not be committed now, and logs
// the moments commits stop and start again. Holding rt.mu.
func (rt *Runtime) holdForSpace() bool {
	err := rt.store.SpaceError()
	rt.stall.mu.Lock()
	defer rt.stall.mu.Unlock()
	switch {
	case err != nil && rt.stall.err == nil:
		rt.stall.since = time.Now()
		rt.log.Warn("disk full: views pause and keep their last committed state until space is freed", "err", err)
	case err == nil && rt.stall.err != nil:
		rt.log.Info("disk has room again: views resume", "paused_for", time.Since(rt.stall.since).Round(time.Millisecond))
	}
	rt.stall.err = err
	return err != nil
}

// Stalled returns the store's disk-full error while epochs are held for
// space, else nil. While they are held it asks the store again: once
// space is freed it answers nil at once, though the held epochs commit
// only at the next barrier tick. So a wait for them (FLUSH, a read of
// acknowledged writes) that begins in between waits for that commit
// instead of failing with the error of a disk that has room again.
func (rt *Runtime) Stalled() error {
	rt.stall.mu.Lock()
	held := rt.stall.err != nil
	rt.stall.mu.Unlock()
	if !held {
		return nil
	}
	return rt.store.SpaceError()
}
