package exec

import (
	"context"
	"errors"
	"time"
)

// A follower runtime takes its epochs from an EpochSource instead of its
// barrier ticker: for each epoch the source decides, every reader of a
// subject takes exactly the messages up to that epoch's cut of the
// subject, then sends the barrier, and the epoch commits under the
// source's epoch number. A cluster's control log is such a source
// (docs/cluster.md): replaying it into a server reproduces the recorded
// epochs, and a member of a cluster runs the coordinator's epochs.
//
// How the cut is held, per subject, with a txnCutter whose cut the
// follower sets (it runs no goroutine of its own):
//   - before barrier e is injected, the cutter's cut rises to cuts_e[S]
//     (never down: a cut that goes back is read as the one before it);
//   - between barriers a reader takes no message past the cutter's cut
//     (belowCut), so it takes nothing an epoch not yet decided may not
//     hold; a ceiling at cuts_e holds later messages until barrier e has
//     reached the input (commit_fence.go), so they fall in a later epoch;
//   - barrier e waits at each reader until it has taken every message of
//     its subject up to cuts_e (reachCut), however long they take to
//     become visible; a paused follower waits with it.
// A subject the source names no cut for keeps its cut: its readers take
// nothing new (a reader starts with cut 0, which holds it where its
// committed position is). Debezium transaction cutters are not used by a
// follower: the recorded cuts already fall between transactions.

// EpochSource decides a follower runtime's epochs.
type EpochSource interface {
	// Next blocks until the epoch after epoch after is decided and
	// returns it; its Epoch is above after. ErrEpochsEnd says there will
	// be none: the runtime commits what it injected and injects no more.
	Next(ctx context.Context, after uint64) (FollowedEpoch, error)
}

// FollowedEpoch is one epoch an EpochSource decided: its number and, per
// subject, the last JetStream sequence it takes.
type FollowedEpoch struct {
	Epoch uint64
	Cuts  map[string]uint64
}

// ErrEpochsEnd is returned by an EpochSource that has no more epochs.
var ErrEpochsEnd = errors.New("no more epochs to follow")

// Follow makes the runtime take its epochs from src from Start on. It
// must be called before any pipeline is added: every reader is built
// with its subject's follow cutter.
func (rt *Runtime) Follow(src EpochSource) { rt.follower = src }

// Following reports whether the runtime takes its epochs from an
// EpochSource.
func (rt *Runtime) Following() bool { return rt.follower != nil }

// followCutter returns the cutter holding subject's followed cut.
func (rt *Runtime) followCutter(subject string) *txnCutter {
	if c, ok := rt.followCutters.Load(subject); ok {
		return c.(*txnCutter)
	}
	c, _ := rt.followCutters.LoadOrStore(subject, &txnCutter{rt: rt, subject: subject, follow: true})
	return c.(*txnCutter)
}

// follow injects the source's epochs until it ends or the runtime closes.
func (rt *Runtime) follow() {
	defer rt.wg.Done()
	for {
		rt.mu.Lock()
		after := rt.injected
		rt.mu.Unlock()
		fe, err := rt.follower.Next(rt.ctx, after)
		if rt.ctx.Err() != nil {
			return
		}
		if err == nil && fe.Epoch <= after {
			err = errors.New("the epoch source went back")
		}
		if err != nil {
			rt.endFollowing(err)
			return
		}
		if !rt.waitToInject() {
			return
		}
		rt.injectFollowed(fe)
	}
}

// endFollowing waits until every injected epoch committed, then logs
// why following ended: the source's end, or its error.
func (rt *Runtime) endFollowing(err error) {
	for {
		rt.mu.Lock()
		rt.tryCommitLocked()
		done := len(rt.pending) == 0 || rt.commitErr != nil
		ch := rt.changed
		rt.mu.Unlock()
		if done {
			break
		}
		select {
		case <-rt.ctx.Done():
			return
		case <-ch:
		case <-time.After(rt.interval):
		}
	}
	committed := rt.committed.Load()
	if errors.Is(err, ErrEpochsEnd) {
		rt.log.Info("followed epochs end", "committed_epoch", committed)
	} else {
		rt.log.Error("following epochs stopped", "committed_epoch", committed, "err", err)
	}
}

// waitToInject waits until the runtime is not paused and fewer than
// maxInflight epochs are pending. It reports false if the runtime closed.
func (rt *Runtime) waitToInject() bool {
	for {
		paused := rt.pauseSignal()
		rt.mu.Lock()
		// Epochs held for disk space are retried here, as the ticker does.
		rt.tryCommitLocked()
		ok := !rt.paused.Load() && len(rt.pending) < rt.maxInflight
		ch := rt.changed
		rt.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-rt.ctx.Done():
			return false
		case <-ch:
		case <-paused:
		case <-time.After(rt.interval):
		}
	}
}

// injectFollowed raises each subject's cut to fe's, then injects barrier
// fe.Epoch: its requests carry the raised cuts.
func (rt *Runtime) injectFollowed(fe FollowedEpoch) {
	rt.fenceGate.Lock()
	defer rt.fenceGate.Unlock()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for subject, seq := range fe.Cuts {
		c := rt.followCutter(subject)
		for {
			cur := c.cut.Load()
			if seq <= cur || c.cut.CompareAndSwap(cur, seq) {
				break
			}
		}
	}
	rt.injectLocked(fe.Epoch)
}

// oldestPendingLocked is the lowest epoch pending (0: none). A follower's
// epochs need not be consecutive (the source's are a subsequence of its
// cluster's), so it commits them in order of number.
func (rt *Runtime) oldestPendingLocked() uint64 {
	var low uint64
	for e := range rt.pending {
		if low == 0 || e < low {
			low = e
		}
	}
	return low
}
