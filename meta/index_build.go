package meta

import (
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/storage"
	"streamdb/types"
)

// The entries of a UNIQUE constraint's backing index, built and dropped
// for the frontend's ALTER TABLE ... ADD / DROP CONSTRAINT and for tables
// stored by a streamdb that kept no such index. Both run while the
// table's dataflow is stopped (DDL.RestartWith, or a catalog load before
// the dataflows start), so the table's stored rows do not change under
// them.

// indexBuildBatch is how many index entries a build writes per batch: the
// memory a build holds, whatever the table's size.
const indexBuildBatch = 64 << 10

// BuildIndexEntries writes the entries of index ix of table d from the
// rows the store holds, after clearing whatever ix's table held, a batch
// at a time, and flushes them. For a unique index it then returns a row
// whose indexed values, none NULL, another row has too, or nil.
func (s *State) BuildIndexEntries(d *catalog.Descriptor, ix *catalog.Index) (types.Row, error) {
	prefix := exec.IndexPrefix(d.ID, ix)
	b := s.store.NewBatch()
	defer func() { b.Close() }()
	if err := b.DeleteRange(prefix, storage.PrefixEnd(prefix), nil); err != nil {
		return nil, err
	}
	var copies types.Row // a row of a table without a primary key held twice
	err := exec.EachIndexEntry(s.store.DB(), d, ix, func(key []byte, vals int, row types.Row, count uint64) error {
		if ix.Unique && vals > 0 && count > 1 && copies == nil {
			copies = row
		}
		if err := b.Set(key, nil, nil); err != nil {
			return err
		}
		if b.Count() < indexBuildBatch {
			return nil
		}
		if err := s.store.Commit(b, false); err != nil {
			return err
		}
		b.Close()
		b = s.store.NewBatch()
		return nil
	})
	if err == nil {
		err = s.store.Commit(b, false)
	}
	if err == nil {
		// Written out now rather than replayed from the WAL at the next
		// start.
		err = s.store.DB().Flush()
	}
	if err != nil || !ix.Unique {
		return nil, err
	}
	if copies != nil {
		return copies, nil
	}
	return exec.FirstDuplicate(s.store.DB(), d, ix)
}

// DeleteIndexEntriesIn deletes every entry of index ix of object id in
// b (an index dropped, or one whose build found a duplicate).
func DeleteIndexEntriesIn(b *StateBatch, id uint32, ix *catalog.Index) error {
	p := exec.IndexPrefix(id, ix)
	return b.DeleteRange(p, storage.PrefixEnd(p), nil)
}
