package control

import "fmt"

// Checker folds a replay of the control log and checks the protocol's
// invariants on it (docs/cluster.md, "Invariants"):
//
//   - one coordinator at a time: tokens never go down;
//   - barrier epochs strictly increase, across coordinators too;
//   - a commit names the barrier of its epoch, after the last commit and
//     at most the newest barrier;
//   - a checkpoint's epoch is committed;
//   - placement versions strictly increase.
//
// The zero value is ready; feed it every record in order from the first.
type Checker struct {
	token, lastEpoch, placement uint64
	barriers                    map[uint64]Record // by sequence, not yet committed
	committed                   Committed
	checkpoints                 []Record
}

// Apply checks r against the records before it.
func (c *Checker) Apply(r Record) error {
	if r.Token < c.token {
		return fmt.Errorf("sequence %d: token %d after token %d: two coordinators appended", r.Seq, r.Token, c.token)
	}
	c.token = r.Token
	switch r.Kind {
	case KindBarrier:
		if r.Epoch <= c.lastEpoch {
			return fmt.Errorf("sequence %d: barrier of epoch %d after epoch %d", r.Seq, r.Epoch, c.lastEpoch)
		}
		c.lastEpoch = r.Epoch
		if c.barriers == nil {
			c.barriers = map[uint64]Record{}
		}
		c.barriers[r.Seq] = r
	case KindCommit:
		b, ok := c.barriers[r.BarrierSeq]
		switch {
		case !ok || b.Epoch != r.Committed:
			return fmt.Errorf("sequence %d: commit of epoch %d names sequence %d, not an uncommitted barrier of that epoch", r.Seq, r.Committed, r.BarrierSeq)
		case r.Committed <= c.committed.Epoch:
			return fmt.Errorf("sequence %d: commit of epoch %d after epoch %d", r.Seq, r.Committed, c.committed.Epoch)
		case r.Epoch != c.lastEpoch:
			return fmt.Errorf("sequence %d: commit says the newest barrier is epoch %d, the log's is %d", r.Seq, r.Epoch, c.lastEpoch)
		}
		c.committed = Committed{Epoch: r.Committed, Cuts: b.Cuts, Seq: r.Seq}
		for seq, b := range c.barriers {
			if b.Epoch <= r.Committed {
				delete(c.barriers, seq)
			}
		}
	case KindCheckpoint:
		if r.Epoch > c.committed.Epoch {
			return fmt.Errorf("sequence %d: checkpoint %d at epoch %d, past the committed epoch %d", r.Seq, r.ID, r.Epoch, c.committed.Epoch)
		}
		c.checkpoints = append(c.checkpoints, r)
	case KindPlacement:
		if r.Version <= c.placement {
			return fmt.Errorf("sequence %d: placement version %d after version %d", r.Seq, r.Version, c.placement)
		}
		c.placement = r.Version
	}
	return nil
}

// Committed is the newest committed epoch with its cuts so far.
func (c *Checker) Committed() Committed { return c.committed }

// Checkpoints are the checkpoint records so far, in order.
func (c *Checker) Checkpoints() []Record { return c.checkpoints }
