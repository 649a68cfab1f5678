package meta

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// CREATE INDEX and DROP INDEX as the frontend bound them. An index is
// part of its table's or materialized view's descriptor (catalog.Index)
// and its entries are state of that object, kept by the object's
// dataflow (exec/index.go), so it follows checkpoints, recovery and
// ROLLBACK TO SAVEPOINT with the object. Both restart the dataflows from
// the committed epoch (RestartWith): while they are stopped the object's
// stored rows do not change, so CREATE builds the entries from them, and
// the dataflow started again keeps the index from the next epoch on.

// CreateIndex adds index ix (name, columns, uniqueness; its slot is
// chosen here) to object d and builds its entries from the rows d
// stores. A unique index over rows that repeat a key is not created:
// dup is one of those rows. An unpopulated view has no rows: its REFRESH
// builds it with the index. The caller holds ddlMu, checked the name and
// columns, and waited until a table's stored rows hold every
// acknowledged write; it checkpoints the change.
func (x *DDL) CreateIndex(d *catalog.Descriptor, ix catalog.Index) (dup types.Row, err error) {
	ix.Seq, ix.Table = FreeIndexSlot(d)
	nd := *d
	nd.Indexes = append(append([]catalog.Index(nil), d.Indexes...), ix)
	if d.Kind == catalog.KindUnpopulatedView {
		if err := x.Replace(d, &nd); err != nil {
			return nil, sqlerr.New(sqlerr.InternalError, "creating index %s failed: %v", ix.Name, err)
		}
		return nil, nil
	}
	err = x.RestartWith(func(b *pebble.Batch) error {
		var err error
		if dup, err = exec.BuildIndex(x.cfg.State.store.DB(), b, &nd, &nd.Indexes[len(nd.Indexes)-1]); err != nil || dup != nil {
			return err
		}
		return x.cfg.Catalog.PutIn(b, &nd)
	})
	if err != nil {
		return nil, sqlerr.New(sqlerr.InternalError, "creating index %s failed: %v", ix.Name, err)
	}
	if dup == nil {
		x.cfg.Log.Info("created index", "index", ix.Name, "on", d.Name)
	}
	return dup, nil
}

// IndexDrop names one index of a DROP INDEX and the object it is on.
type IndexDrop struct {
	Object *catalog.Descriptor
	Index  catalog.Index
}

// DropIndexes removes the indexes of drops, with their entries, in one
// restart of the dataflows. The caller holds ddlMu and checked that no
// constraint needs them; it checkpoints the change.
func (x *DDL) DropIndexes(drops []IndexDrop) error {
	err := x.RestartWith(func(b *pebble.Batch) error {
		changed := map[string]*catalog.Descriptor{}
		var order []*catalog.Descriptor
		for _, t := range drops {
			nd, ok := changed[t.Object.Name]
			if !ok {
				c := *t.Object
				nd = &c
				changed[t.Object.Name] = nd
				order = append(order, nd)
			}
			var keep []catalog.Index
			for _, ix := range nd.Indexes {
				if ix.Name != t.Index.Name {
					keep = append(keep, ix)
				}
			}
			nd.Indexes = keep
			p := exec.IndexPrefix(nd.ID, &t.Index)
			if err := b.DeleteRange(p, storage.PrefixEnd(p), nil); err != nil {
				return err
			}
		}
		return x.cfg.Catalog.PutIn(b, order...)
	})
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "dropping an index failed: %v", err)
	}
	return nil
}

// RestartWith stops every dataflow at the committed epoch, commits what
// write puts in a batch (nothing if it fails), reloads the catalog and
// starts the dataflows again: queries wait (stateMu) and checkpoints
// pause meanwhile. The caller holds ddlMu.
func (x *DDL) RestartWith(write func(b *pebble.Batch) error) error {
	x.cfg.StateMu.Lock()
	defer x.cfg.StateMu.Unlock()
	return x.cfg.Coord.Exclusive(func() error {
		x.cfg.Runtime.StopAll()
		x.cfg.ResetTables()
		defer x.cfg.Runtime.StartDeferred()
		store := x.cfg.State.store
		b := store.NewBatch()
		defer b.Close()
		err := write(b)
		if err == nil {
			err = store.Commit(b, true)
		}
		if lerr := x.cfg.Reload(); lerr != nil && err == nil {
			err = lerr
		}
		return err
	})
}

// FreeIndexSlot returns the lowest index sequence number d's indexes do
// not use, with its state table.
func FreeIndexSlot(d *catalog.Descriptor) (seq, table uint16) {
	used := map[uint16]bool{}
	for _, ix := range d.Indexes {
		used[ix.Seq] = true
	}
	seq = 1
	for used[seq] {
		seq++
	}
	return seq, exec.FirstIndexTable + seq
}
