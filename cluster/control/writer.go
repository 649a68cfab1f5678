package control

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
)

// Lease is what a Writer needs of the coordinator lease (*ha.Lease).
type Lease interface {
	// Check answers from the holder's own clock whether it still holds
	// the lease.
	Check() error
	// Token is the lease revision the holder last wrote.
	Token() uint64
}

// ErrFenced is returned by every append of a Writer once it may no longer
// append: its lease is lost, or the stream moved past the sequence it
// last saw (another coordinator appended). A fenced Writer never appends
// again; only a coordinator that (re)takes the lease opens a new Writer,
// which reads the tail afresh.
var ErrFenced = errors.New("this coordinator may no longer append to the control stream")

// ErrOrder is returned for a record that would break the log's order: a
// barrier epoch not after the last one, a commit not after the last
// commit or of an epoch without a barrier this writer knows, a
// checkpoint at an epoch not yet committed, a placement version not
// after the last.
var ErrOrder = errors.New("control record out of order")

// Writer appends records to a cluster's control stream for the holder of
// the coordinator lease. Every append carries the expected last sequence
// of the stream, so appends from two writers never interleave: the first
// append after another writer's fails, and fences this one.
//
// An append whose outcome is unknown (a timeout) leaves the writer as it
// was: retrying the same record either lands it (it was not stored) or
// fails on the sequence (it was) and fences the writer, so a record is
// never stored twice.
type Writer struct {
	js      jetstream.JetStream
	cluster string
	lease   Lease

	mu sync.Mutex
	// lastSeq is the stream's last sequence as this writer knows it: the
	// expected last sequence of its next append.
	lastSeq uint64
	// lastEpoch is the newest barrier's epoch; committed the newest
	// committed epoch; placement the newest placement version; checkpoint
	// the newest checkpoint id recorded.
	lastEpoch, committed, placement, checkpoint uint64
	// barrierSeqs holds the sequence of each barrier not yet committed.
	barrierSeqs map[uint64]uint64
	fenced      error

	// beforePublish, when set (tests), runs between the lease check and
	// the publish: where a coordinator paused by SIGSTOP does most harm.
	beforePublish func()
}

// OpenWriter binds (or creates, with replicas copies) the cluster's
// control stream and reads its tail: the newest barrier, commit,
// checkpoint and placement, and the last sequence. Call it once the
// lease is taken; epochs go on after the newest recorded one.
func OpenWriter(ctx context.Context, js jetstream.JetStream, cluster string, replicas int, lease Lease) (*Writer, error) {
	if err := lease.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFenced, err)
	}
	s, err := EnsureStream(ctx, js, cluster, replicas)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("control stream %s: %w", StreamName(cluster), err)
	}
	// The last sequence first: a record appended after it makes the
	// first append fail, never hides behind the tail read below.
	w := &Writer{js: js, cluster: cluster, lease: lease, lastSeq: info.State.LastSeq, barrierSeqs: map[uint64]uint64{}}
	tail := func(kind Kind) (Record, bool, error) {
		r, err := lastOfKind(ctx, s, cluster, kind)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return Record{}, false, nil
		}
		if err == nil && r.Seq > w.lastSeq {
			err = fmt.Errorf("%w: record %d appended while this coordinator read the tail", ErrFenced, r.Seq)
		}
		return r, err == nil, err
	}
	if r, ok, err := tail(KindBarrier); err != nil {
		return nil, err
	} else if ok {
		w.lastEpoch = r.Epoch
		w.barrierSeqs[r.Epoch] = r.Seq
	}
	if r, ok, err := tail(KindCommit); err != nil {
		return nil, err
	} else if ok {
		w.committed = r.Committed
		if w.committed >= w.lastEpoch {
			delete(w.barrierSeqs, w.lastEpoch)
		}
	}
	if r, ok, err := tail(KindCheckpoint); err != nil {
		return nil, err
	} else if ok {
		w.checkpoint = r.ID
	}
	if r, ok, err := tail(KindPlacement); err != nil {
		return nil, err
	} else if ok {
		w.placement = r.Version
	}
	return w, nil
}

// lastOfKind reads the newest record of kind.
func lastOfKind(ctx context.Context, s jetstream.Stream, cluster string, kind Kind) (Record, error) {
	m, err := s.GetLastMsgForSubject(ctx, Subject(cluster, kind))
	if err != nil {
		return Record{}, err
	}
	return decodeAt(m.Data, m.Sequence, kind)
}

// decodeAt decodes the record stored at seq, which must be of kind.
func decodeAt(data []byte, seq uint64, kind Kind) (Record, error) {
	r, err := Decode(data)
	if err != nil {
		return Record{}, fmt.Errorf("sequence %d: %w", seq, err)
	}
	if kind != "" && r.Kind != kind {
		return Record{}, fmt.Errorf("sequence %d holds a %s record on the subject of %s records", seq, r.Kind, kind)
	}
	r.Seq = seq
	return r, nil
}

// LastEpoch is the newest barrier's epoch (0: none yet); the next barrier
// must be after it.
func (w *Writer) LastEpoch() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastEpoch
}

// Committed is the newest committed epoch (0: none yet).
func (w *Writer) Committed() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.committed
}

// LastCheckpoint is the id of the newest checkpoint recorded (0: none).
func (w *Writer) LastCheckpoint() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.checkpoint
}

// Barrier appends BARRIER{epoch, cuts, checkpoint}; epoch must be after
// every earlier barrier's, this coordinator's or a predecessor's.
func (w *Writer) Barrier(ctx context.Context, epoch uint64, cuts map[string]uint64, checkpoint bool) (Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if epoch <= w.lastEpoch {
		return Record{}, fmt.Errorf("%w: barrier of epoch %d after epoch %d", ErrOrder, epoch, w.lastEpoch)
	}
	r, err := w.appendLocked(ctx, Record{Kind: KindBarrier, Epoch: epoch, Cuts: cuts, Checkpoint: checkpoint})
	if err == nil {
		w.lastEpoch = epoch
		w.barrierSeqs[epoch] = r.Seq
	}
	return r, err
}

// Commit appends COMMIT{epoch: the newest barrier's, committed}: every
// epoch up to committed is committed. committed must have a barrier this
// writer appended or found at the tail, after the last commit.
func (w *Writer) Commit(ctx context.Context, committed uint64) (Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seq, ok := w.barrierSeqs[committed]
	if committed <= w.committed || !ok {
		return Record{}, fmt.Errorf("%w: commit of epoch %d (last commit %d, newest barrier %d)", ErrOrder, committed, w.committed, w.lastEpoch)
	}
	r, err := w.appendLocked(ctx, Record{Kind: KindCommit, Epoch: w.lastEpoch, Committed: committed, BarrierSeq: seq})
	if err == nil {
		w.committed = committed
		for e := range w.barrierSeqs {
			if e <= committed {
				delete(w.barrierSeqs, e)
			}
		}
	}
	return r, err
}

// Checkpoint appends CHECKPOINT{id, epoch, digest}: checkpoint id, of
// committed epoch epoch, is complete and its manifest has digest.
func (w *Writer) Checkpoint(ctx context.Context, id, epoch uint64, digest string) (Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if epoch > w.committed {
		return Record{}, fmt.Errorf("%w: checkpoint %d at epoch %d, past the committed epoch %d", ErrOrder, id, epoch, w.committed)
	}
	r, err := w.appendLocked(ctx, Record{Kind: KindCheckpoint, ID: id, Epoch: epoch, Digest: digest})
	if err == nil {
		w.checkpoint = id
	}
	return r, err
}

// Restore appends RESTORE{id}: every task reloads checkpoint id.
func (w *Writer) Restore(ctx context.Context, id uint64) (Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.appendLocked(ctx, Record{Kind: KindRestore, ID: id})
}

// Placement appends PLACEMENT{version}, after every earlier version.
func (w *Writer) Placement(ctx context.Context, version uint64) (Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if version <= w.placement {
		return Record{}, fmt.Errorf("%w: placement version %d after version %d", ErrOrder, version, w.placement)
	}
	r, err := w.appendLocked(ctx, Record{Kind: KindPlacement, Version: version})
	if err == nil {
		w.placement = version
	}
	return r, err
}

// Fenced returns the error that fenced the writer, nil while it may
// append.
func (w *Writer) Fenced() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fenced
}

// appendLocked publishes r after the lease check, expecting the stream's
// last sequence to be the one this writer last saw.
func (w *Writer) appendLocked(ctx context.Context, r Record) (Record, error) {
	if w.fenced != nil {
		return Record{}, w.fenced
	}
	if err := w.lease.Check(); err != nil {
		w.fenced = fmt.Errorf("%w: %v", ErrFenced, err)
		return Record{}, w.fenced
	}
	r.Token = w.lease.Token()
	data, err := Encode(r)
	if err != nil {
		return Record{}, err
	}
	if w.beforePublish != nil {
		w.beforePublish()
	}
	ack, err := w.js.Publish(ctx, Subject(w.cluster, r.Kind), data,
		jetstream.WithExpectStream(StreamName(w.cluster)), jetstream.WithExpectLastSequence(w.lastSeq))
	var notDurable *broker.NotDurableError
	switch {
	case err == nil:
	case errors.As(err, &notDurable):
		// Stored, so the stream moved on, but not known to be on disk
		// (the broker's fsync failures are sticky): stop here, so that
		// nothing is appended after a record that may be lost.
		w.fenced = fmt.Errorf("%w: %v", ErrFenced, err)
		return Record{}, w.fenced
	case wrongLastSequence(err):
		w.fenced = fmt.Errorf("%w: the stream moved past sequence %d (another coordinator appended): %v", ErrFenced, w.lastSeq, err)
		return Record{}, w.fenced
	default:
		return Record{}, fmt.Errorf("append %s record to %s: %w", r.Kind, StreamName(w.cluster), err)
	}
	w.lastSeq = ack.Sequence
	r.Seq = ack.Sequence
	return r, nil
}

// wrongLastSequence reports an append refused for its expected last
// sequence.
func wrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
