package node

import "streamdb/storage"

// ReplaceState replaces everything the state store holds with src's state
// (ROLLBACK TO), while checkpoints wait (the coordinator's Exclusive): it
// stops every view, lets carry read what must outlive the swap, swaps the
// store's contents at the runtime's committed epoch, writes back what
// carry kept (its restore, at that epoch), then calls load, which starts
// the views again from the new state. The views load starts begin
// together once it returns, so that a view reading another's changes is
// wired before that one takes input.
func (n *Node) ReplaceState(src *storage.Store, carry func() (restore func(epoch uint64) error, err error), load func() error) error {
	return n.coord.Exclusive(func() error {
		n.rt.StopAll()
		restore, err := carry()
		if err != nil {
			return err
		}
		epoch := n.rt.CommittedEpoch()
		if err := n.store.ReplaceAll(src, epoch); err != nil {
			return err
		}
		if err := restore(epoch); err != nil {
			return err
		}
		defer n.rt.StartDeferred()
		return load()
	})
}
