package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/ha"
)

// Source is what the Recorder reads of one server: its committed epochs
// with each reader's positions, and its completed checkpoints.
type Source interface {
	// CommittedCut returns the newest committed epoch and, per reader
	// (a view's or table's pipeline), its position per source in it.
	CommittedCut() (epoch uint64, reports []Report, err error)
	// CheckpointsAfter returns the completed checkpoints with an id
	// above after, oldest first.
	CheckpointsAfter(after uint64) ([]CompletedCheckpoint, error)
}

// CompletedCheckpoint is a checkpoint the server completed: its id, the
// committed epoch its state holds and its manifest's SHA-256 (hex).
type CompletedCheckpoint struct {
	ID, Epoch uint64
	Digest    string
}

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	Cluster string
	// Holder names this server in the coordinator lease (unique per
	// process start); Addr is where clients reach it.
	Holder, Addr string
	// Replicas of the control stream and the lease bucket (0: 1).
	Replicas int
	// Interval is the time between looks at the source (default 20ms).
	Interval time.Duration
	// LeaseTTL and LeaseRenew: the coordinator lease's (ha's defaults).
	LeaseTTL, LeaseRenew time.Duration
	Log                  *slog.Logger
}

// A Recorder makes one server the coordinator of a cluster of one: once
// it holds the coordinator lease it appends, for the newest epoch the
// server has committed, BARRIER{epoch, cuts} and COMMIT{epoch}, and a
// CHECKPOINT for each checkpoint the server completes. The server's
// runtime drives its epochs; the recorder only records them, from its own
// goroutine, so it never holds an epoch back: when appends are slower
// than epochs it records the newest committed epoch, so the recorded
// epochs are an increasing subsequence of the server's. A server whose
// epochs are behind the log (restored from an older checkpoint) records
// nothing until its epochs pass the newest recorded one.
type Recorder struct {
	js  jetstream.JetStream
	src Source
	o   RecorderOptions

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	lease *ha.Lease
	// acquired: lease was taken (a Lease is taken at most once).
	acquired bool
	writer   *Writer
	// lastTry is when the step last tried to take the lease.
	lastTry time.Time
	err     error
}

// StartRecorder validates the options and starts recording in the
// background: taking the lease may wait for another coordinator's to
// expire.
func StartRecorder(js jetstream.JetStream, src Source, o RecorderOptions) (*Recorder, error) {
	if err := ValidateCluster(o.Cluster); err != nil {
		return nil, err
	}
	if o.Interval <= 0 {
		o.Interval = 20 * time.Millisecond
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = ha.DefaultTTL
	}
	if o.LeaseRenew == 0 {
		o.LeaseRenew = ha.DefaultRenew
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	o.Log = o.Log.With("cluster", o.Cluster)
	r := &Recorder{js: js, src: src, o: o, stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r, nil
}

// Close stops recording and releases the lease, so that another server
// takes over without waiting for it to expire.
func (r *Recorder) Close() {
	r.closeOnce.Do(r.close)
}

func (r *Recorder) close() {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lease != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r.lease.Release(ctx)
		r.lease = nil
	}
}

// LastError is the last error recording met (nil after a success).
func (r *Recorder) LastError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Recorder) run() {
	defer close(r.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	for {
		err := r.step(ctx)
		r.mu.Lock()
		if err != nil && ctx.Err() == nil && (r.err == nil || r.err.Error() != err.Error()) {
			r.o.Log.Warn("control log", "err", err)
		}
		r.err = err
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// step takes the lease and opens the writer when needed, then records the
// newest committed epoch and the checkpoints completed since the last.
func (r *Recorder) step(ctx context.Context) error {
	w, err := r.writerFor(ctx)
	if err != nil || w == nil {
		return err
	}
	epoch, reports, err := r.src.CommittedCut()
	if err != nil {
		return err
	}
	if epoch > w.LastEpoch() {
		// What every reader holds at epoch: the server's runtime, not
		// the log, decides its positions, so the previous cut is not
		// carried forward (a view created over existing input, or a
		// state restored, holds less than an earlier epoch's cut).
		cuts := MinCuts(nil, reports)
		if _, err := w.Barrier(ctx, epoch, cuts, false); err != nil {
			return r.failed(ctx, err)
		}
		if _, err := w.Commit(ctx, epoch); err != nil {
			return r.failed(ctx, err)
		}
	}
	done, err := r.src.CheckpointsAfter(w.LastCheckpoint())
	if err != nil {
		return err
	}
	for _, c := range done {
		if c.Epoch > w.Committed() {
			break // recorded once its epoch is
		}
		if _, err := w.Checkpoint(ctx, c.ID, c.Epoch, c.Digest); err != nil {
			return r.failed(ctx, err)
		}
	}
	return nil
}

// writerFor returns the writer once this server holds the lease (nil
// while another server does).
func (r *Recorder) writerFor(ctx context.Context) (*Writer, error) {
	r.mu.Lock()
	lease, w := r.lease, r.writer
	r.mu.Unlock()
	if w != nil {
		return w, nil
	}
	if lease != nil && r.acquired && lease.Check() != nil {
		// Held once and lost: a Lease is taken only once, so stop its
		// renewals (deleting the entry only if it is still this
		// server's) and take a new one.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lease.Release(rctx)
		cancel()
		lease = nil
		r.mu.Lock()
		r.lease, r.acquired = nil, false
		r.mu.Unlock()
	}
	if lease == nil {
		var err error
		lease, err = ha.Open(ctx, r.js, ha.Options{Group: LeaseGroup(r.o.Cluster), Holder: r.o.Holder, Addr: r.o.Addr,
			TTL: r.o.LeaseTTL, Renew: r.o.LeaseRenew, Replicas: r.o.Replicas, Log: r.o.Log})
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.lease = lease
		r.mu.Unlock()
	}
	if lease.Check() != nil {
		// Another server coordinates, or did: try again once per renew
		// interval, not every step (a create on the lease bucket).
		if time.Since(r.lastTry) < r.o.LeaseRenew {
			return nil, nil
		}
		r.lastTry = time.Now()
		ok, err := lease.TryAcquire(ctx)
		if !ok || err != nil {
			return nil, err // another server coordinates
		}
		r.mu.Lock()
		r.acquired = true
		r.mu.Unlock()
		r.o.Log.Info("this server is the cluster's coordinator", "token", lease.Token())
	}
	w, err := OpenWriter(ctx, r.js, r.o.Cluster, r.o.Replicas, lease)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writer = w
	return w, nil
}

// failed handles an append's error: a fenced writer is dropped; if this
// server can still prove the lease (a compare-and-set on its token, so no
// other coordinator took it, and none appended), the next step reads the
// tail afresh, else the lease is dropped and the next step waits to take
// it again.
func (r *Recorder) failed(ctx context.Context, err error) error {
	if !errors.Is(err, ErrFenced) {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writer = nil
	if r.lease != nil {
		// A lease that fails to confirm is dropped by writerFor.
		r.lease.Confirm(ctx)
	}
	return fmt.Errorf("stopped appending: %w", err)
}
