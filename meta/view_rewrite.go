package meta

import (
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/storage"
)

// ViewRewrite is how ALTER MATERIALIZED VIEW rewrites a view's state for
// its new plan. State.RewriteView commits it in one synced batch with
// the view's new descriptor, so that a crash leaves the view either as
// it was or as altered.
type ViewRewrite struct {
	// View is the view's new descriptor; OldID and OldColumns describe
	// the view before the change, OldIndexes its indexes, whose state is
	// cleared (the view's indexes are built again from its rows).
	View       *catalog.Descriptor
	OldID      uint32
	OldColumns int
	OldIndexes []catalog.Index
	// Drop and Reemit are the state tables deleted and those whose
	// operators send their output again (exec.SwapViewState).
	Drop, Reemit []uint16
	// Rebuild: the view's state is deleted and it reads its sources again
	// from Starts (by source index: the sequence before the first message).
	Rebuild bool
	Starts  map[uint16]uint64
}

// RewriteView writes r's state changes and the view's descriptor (through
// cat) in one synced batch. The caller has stopped every dataflow and
// holds sql's ddlMu, stateMu and the checkpoint coordinator's Exclusive.
func (s *State) RewriteView(cat *Catalog, r ViewRewrite) error {
	b := s.store.NewBatch()
	defer b.Close()
	id := r.View.ID
	if r.Rebuild {
		if err := storage.DeleteObject(b, id); err != nil {
			return err
		}
		for i, seq := range r.Starts {
			if err := storage.PutPosition(b, id, i, storage.SourcePosition{Seq: seq}); err != nil {
				return err
			}
		}
	}
	if err := exec.SwapViewState(s.store, b, id, r.OldColumns, r.Drop, r.Reemit, r.Rebuild); err != nil {
		return err
	}
	for i := range r.OldIndexes {
		p := exec.IndexPrefix(r.OldID, &r.OldIndexes[i])
		if err := b.DeleteRange(p, storage.PrefixEnd(p), nil); err != nil {
			return err
		}
	}
	if err := cat.PutIn(b, r.View); err != nil {
		return err
	}
	return s.store.Commit(b, true)
}
