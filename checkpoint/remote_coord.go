package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// remoteCopies is where the coordinator copies checkpoints and savepoints
// when state.checkpoints.dir or state.savepoints.dir name an object store
// bucket. Every checkpoint is still written locally first (the Pebble
// checkpoint needs a file system, and the local copy keeps the next
// upload incremental and ROLLBACK TO fast); it counts as completed only
// once its metadata is in the bucket.
type remoteCopies struct {
	// mu serialises uploads, retention and collection: Retain and Collect
	// must never run while an upload to the same bucket is under way, or
	// they would delete that upload's files as leftovers. It is taken
	// before Coordinator.mu, never while holding it.
	mu          sync.Mutex
	checkpoints *Remote
	savepoints  *Remote
	// kept: the positions of the checkpoints the bucket held after the
	// last retention (guarded by mu); JetStream must keep their input.
	kept  []Position
	fence atomic.Pointer[func() error]
}

// remoteTimeout bounds retention and listing of a bucket.
const remoteTimeout = time.Minute

// SetRemote has completed checkpoints uploaded to checkpoints and
// savepoints to savepoints (either may be nil: local only). Call it
// before Start. Ids continue after the largest in the buckets, so that a
// server restored from a bucket never reuses an id there.
func (c *Coordinator) SetRemote(ctx context.Context, checkpoints, savepoints *Remote) error {
	c.remote.mu.Lock()
	defer c.remote.mu.Unlock()
	c.remote.checkpoints, c.remote.savepoints = checkpoints, savepoints
	for _, r := range []*Remote{checkpoints, savepoints} {
		if r == nil {
			continue
		}
		cks, err := r.List(ctx)
		if err != nil {
			return err
		}
		sps, err := r.Savepoints(ctx)
		if err != nil {
			return err
		}
		c.mu.Lock()
		for _, m := range append(cks, sps...) {
			c.nextID = max(c.nextID, m.ID)
		}
		c.mu.Unlock()
		if r == checkpoints {
			c.remote.kept = positionsOf(cks)
		}
	}
	return nil
}

// SetUploadFence has fn run before the metadata of every checkpoint or
// savepoint is put into a bucket; an error from it (this server is no
// longer the one allowed to commit) fails the checkpoint and leaves
// nothing in the bucket that restore would use.
func (c *Coordinator) SetUploadFence(fn func() error) { c.remote.fence.Store(&fn) }

// Remotes returns the buckets checkpoints and savepoints are uploaded to
// (nil: local only).
func (c *Coordinator) Remotes() (checkpoints, savepoints *Remote) {
	c.remote.mu.Lock()
	defer c.remote.mu.Unlock()
	return c.remote.checkpoints, c.remote.savepoints
}

func positionsOf(ms []*Meta) []Position {
	var out []Position
	for _, m := range ms {
		out = append(out, m.Positions...)
	}
	return out
}

// uploads reports whether points of kind go to a bucket. Lock order:
// remote.mu before c.mu, never the other way.
func (c *Coordinator) uploads(kind string) bool {
	c.remote.mu.Lock()
	defer c.remote.mu.Unlock()
	return c.remote.bucketFor(&Meta{Kind: kind}) != nil
}

func (rc *remoteCopies) bucketFor(m *Meta) *Remote {
	if m.Kind == KindSavepoint {
		return rc.savepoints
	}
	return rc.checkpoints
}

// upload copies the local checkpoint or savepoint m, written and
// described, into its bucket, if one is configured; then m is completed,
// with its location and a duration that includes the upload.
func (c *Coordinator) upload(ctx context.Context, m *Meta) error {
	c.remote.mu.Lock()
	defer c.remote.mu.Unlock()
	r := c.remote.bucketFor(m)
	if r == nil {
		return nil
	}
	if m.Kind == KindSavepoint {
		if _, err := r.FindSavepoint(ctx, m.Name); err == nil {
			return ErrSavepointExists
		} else if !errors.Is(err, ErrNoSuchPoint) {
			return err
		}
	}
	var fence func() error
	if fn := c.remote.fence.Load(); fn != nil {
		fence = *fn
	}
	start := time.Now()
	c.mu.Lock()
	up := *m
	c.mu.Unlock()
	up.Status = StatusCompleted
	sent, err := r.Upload(ctx, &up, fence)
	if err != nil {
		return fmt.Errorf("upload to %s%s: %w", RemoteScheme, r.Bucket, err)
	}
	c.mu.Lock()
	m.Status = StatusCompleted
	m.Location = r.LocationOf(m)
	m.CompletedAt = time.Now().UTC()
	m.Duration = Duration(m.CompletedAt.Sub(m.StartedAt))
	c.mu.Unlock()
	c.log.Debug("uploaded", "kind", m.Kind, "id", m.ID, "bucket", r.Bucket, "bytes", sent, "took", time.Since(start))
	return nil
}

// retainRemote applies state.checkpoints.num-retained to the bucket and
// deletes the files no kept checkpoint or savepoint lists. A failure is
// logged: the next checkpoint retries.
func (c *Coordinator) retainRemote(keep int) {
	c.remote.mu.Lock()
	defer c.remote.mu.Unlock()
	r := c.remote.checkpoints
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	kept, err := r.retain(ctx, keep)
	if err != nil {
		c.log.Warn("retention in checkpoint bucket", "bucket", r.Bucket, "err", err)
		return
	}
	c.remote.kept = positionsOf(kept)
}

// ReleaseRemoteSavepoint deletes the savepoint called name from the
// savepoints bucket, and the files only it held; ErrNoSuchPoint if the
// bucket has no such savepoint (or there is no bucket).
func (c *Coordinator) ReleaseRemoteSavepoint(ctx context.Context, name string) error {
	c.remote.mu.Lock()
	defer c.remote.mu.Unlock()
	r := c.remote.savepoints
	if r == nil {
		return ErrNoSuchPoint
	}
	if err := r.DeleteSavepoint(ctx, name); err != nil {
		return err
	}
	return r.Collect(ctx)
}

// remotePositions returns the source positions of the checkpoints kept in
// the bucket.
func (c *Coordinator) remotePositions() []Position {
	c.remote.mu.Lock()
	defer c.remote.mu.Unlock()
	return append([]Position(nil), c.remote.kept...)
}
