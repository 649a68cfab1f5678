package control

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Reader reads a cluster's control stream. It never writes, so any
// server (or a replay) may use one.
type Reader struct {
	js      jetstream.JetStream
	cluster string
}

// NewReader reads the control stream of cluster.
func NewReader(js jetstream.JetStream, cluster string) *Reader {
	return &Reader{js: js, cluster: cluster}
}

// Replay calls fn with every record from sequence from (0: the first) up
// to the stream's last sequence when Replay starts, in order, each with
// its Seq. It reads through an ordered consumer (R1, ephemeral: no Raft
// group of its own). A record that does not decode ends the replay with
// an error: a reader never skips what it does not understand. An error
// from fn ends it too and is returned.
func (r *Reader) Replay(ctx context.Context, from uint64, fn func(Record) error) error {
	s, err := r.js.Stream(ctx, StreamName(r.cluster))
	if err != nil {
		return fmt.Errorf("control stream %s: %w", StreamName(r.cluster), err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return err
	}
	last := info.State.LastSeq
	from = max(from, info.State.FirstSeq, 1)
	if last < from {
		return nil
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{SubjectPrefix(r.cluster) + ".>"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
	})
	if err != nil {
		return err
	}
	it, err := c.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	stopOnCancel := context.AfterFunc(ctx, it.Stop)
	defer stopOnCancel()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		md, err := m.Metadata()
		if err != nil {
			return err
		}
		rec, err := decodeAt(m.Data(), md.Sequence.Stream, "")
		if err != nil {
			return err
		}
		if m.Subject() != Subject(r.cluster, rec.Kind) {
			return fmt.Errorf("sequence %d: a %s record on subject %s", rec.Seq, rec.Kind, m.Subject())
		}
		if err := fn(rec); err != nil {
			return err
		}
		if rec.Seq >= last {
			return nil
		}
	}
}

// Committed is the newest committed epoch with the cuts of its barrier.
type Committed struct {
	Epoch uint64
	// Cuts: per source, the last sequence epoch Epoch took.
	Cuts map[string]uint64
	// Seq is the sequence of the commit record.
	Seq uint64
}

// Committed returns the newest committed epoch and its cuts, read from
// the tail (two lookups); ok is false when nothing is committed yet.
func (r *Reader) Committed(ctx context.Context) (c Committed, ok bool, err error) {
	s, err := r.js.Stream(ctx, StreamName(r.cluster))
	if err != nil {
		return Committed{}, false, fmt.Errorf("control stream %s: %w", StreamName(r.cluster), err)
	}
	commit, err := lastOfKind(ctx, s, r.cluster, KindCommit)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Committed{}, false, nil
	}
	if err != nil {
		return Committed{}, false, err
	}
	m, err := s.GetMsg(ctx, commit.BarrierSeq)
	if err != nil {
		return Committed{}, false, fmt.Errorf("barrier of the commit at sequence %d: %w", commit.Seq, err)
	}
	barrier, err := decodeAt(m.Data, m.Sequence, KindBarrier)
	if err != nil {
		return Committed{}, false, err
	}
	if barrier.Epoch != commit.Committed {
		return Committed{}, false, fmt.Errorf("the commit at sequence %d of epoch %d names the barrier of epoch %d", commit.Seq, commit.Committed, barrier.Epoch)
	}
	return Committed{Epoch: commit.Committed, Cuts: barrier.Cuts, Seq: commit.Seq}, true, nil
}
