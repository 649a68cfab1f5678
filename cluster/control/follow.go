package control

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrFollowEnd is returned by Follower.Next once the epoch it would
// return is past the follower's last epoch.
var ErrFollowEnd = errors.New("the followed epochs end here")

// ErrNotFollowed is returned for a record a follower cannot act on yet:
// a RESTORE (a follower does not reload checkpoints).
var ErrNotFollowed = errors.New("record not followed yet")

// Follower reads a cluster's committed epochs in order, as the log grows:
// the barrier of each epoch a COMMIT covers (every barrier up to its
// committed epoch), never one not yet committed, since a barrier the
// cluster never commits may be re-driven past. It checks every record
// with a Checker, so a log that breaks the protocol stops it rather than
// steer a server. CHECKPOINT and PLACEMENT records pass (a follower of
// one server takes no checkpoint of the cluster's and has one place); a
// RESTORE stops it (ErrNotFollowed).
type Follower struct {
	js      jetstream.JetStream
	cluster string
	// until is the last epoch to return (0: no end).
	until uint64

	it    jetstream.MessagesContext
	check Checker
	// open holds barriers read and not yet committed, in order; ready
	// holds committed barriers not yet returned, in order.
	open, ready []Record
}

// NewFollower follows cluster's control log; until, when not 0, is the
// last epoch Next returns.
func NewFollower(js jetstream.JetStream, cluster string, until uint64) (*Follower, error) {
	if err := ValidateCluster(cluster); err != nil {
		return nil, err
	}
	return &Follower{js: js, cluster: cluster, until: until}, nil
}

// Next returns the barrier of the first committed epoch above after,
// waiting for it to be appended and committed. It returns ErrFollowEnd
// once that epoch is past the follower's last.
func (f *Follower) Next(ctx context.Context, after uint64) (Record, error) {
	for {
		for len(f.ready) > 0 {
			b := f.ready[0]
			f.ready = f.ready[1:]
			if b.Epoch <= after {
				continue
			}
			if f.until != 0 && b.Epoch > f.until {
				return Record{}, ErrFollowEnd
			}
			return b, nil
		}
		rec, err := f.read(ctx)
		if err != nil {
			return Record{}, err
		}
		if err := f.check.Apply(rec); err != nil {
			return Record{}, fmt.Errorf("control log of cluster %s: %w", f.cluster, err)
		}
		switch rec.Kind {
		case KindBarrier:
			f.open = append(f.open, rec)
		case KindCommit:
			n := 0
			for n < len(f.open) && f.open[n].Epoch <= rec.Committed {
				n++
			}
			f.ready = append(f.ready, f.open[:n]...)
			f.open = append([]Record(nil), f.open[n:]...)
		case KindRestore:
			return Record{}, fmt.Errorf("%w: RESTORE of checkpoint %d at sequence %d", ErrNotFollowed, rec.ID, rec.Seq)
		}
	}
}

// read returns the next record of the log, waiting for it; the first
// call opens an ordered consumer from the log's first record.
func (f *Follower) read(ctx context.Context) (Record, error) {
	if f.it == nil {
		s, err := f.js.Stream(ctx, StreamName(f.cluster))
		if err != nil {
			return Record{}, fmt.Errorf("control stream %s: %w", StreamName(f.cluster), err)
		}
		c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{SubjectPrefix(f.cluster) + ".>"},
		})
		if err != nil {
			return Record{}, err
		}
		if f.it, err = c.Messages(); err != nil {
			return Record{}, err
		}
	}
	stop := context.AfterFunc(ctx, f.it.Stop)
	m, err := f.it.Next()
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return Record{}, ctx.Err()
		}
		return Record{}, err
	}
	md, err := m.Metadata()
	if err != nil {
		return Record{}, err
	}
	rec, err := decodeAt(m.Data(), md.Sequence.Stream, "")
	if err != nil {
		return Record{}, err
	}
	if m.Subject() != Subject(f.cluster, rec.Kind) {
		return Record{}, fmt.Errorf("sequence %d: a %s record on subject %s", rec.Seq, rec.Kind, m.Subject())
	}
	return rec, nil
}

// Close stops reading.
func (f *Follower) Close() {
	if f.it != nil {
		f.it.Stop()
	}
}
