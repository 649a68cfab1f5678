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
// space, else nil.
func (rt *Runtime) Stalled() error {
	rt.stall.mu.Lock()
	defer rt.stall.mu.Unlock()
	return rt.stall.err
}
