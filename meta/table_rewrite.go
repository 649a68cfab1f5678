package meta

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// replaceTableDescriptors writes a change that leaves the table's rows as
// they are (a rename, a default, NOT NULL, a dropped index's column) in
// one synced batch: New and Others, and the entries of the indexes the
// change dropped removed.
func (s *State) replaceTableDescriptors(cat *Catalog, a *ColumnChange) error {
	b := s.store.NewBatch()
	defer b.Close()
	if err := clearIndexes(b, a.Old.ID, a.DroppedIndexes); err != nil {
		return err
	}
	if err := cat.PutIn(b, append([]*catalog.Descriptor{a.New}, a.Others...)...); err != nil {
		return err
	}
	return s.store.Commit(b, true)
}

// rewriteTable returns an uncommitted batch holding the table's rows in
// the change's new shape, its indexes rebuilt and its descriptors. The
// caller has stopped every dataflow and holds ddlMu, stateMu and the
// coordinator's Exclusive; it commits the batch and closes it.
func (s *State) rewriteTable(cat *Catalog, a *ColumnChange) (*pebble.Batch, error) {
	// Indexed: rebuildIndexes reads the rewritten rows from it.
	b := s.store.DB().NewIndexedBatch()
	err := rewriteTableRows(s.store, b, a)
	if err == nil {
		err = rebuildIndexes(b, a)
	}
	if err == nil {
		err = cat.PutIn(b, append([]*catalog.Descriptor{a.New}, a.Others...)...)
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// rewriteTableRows writes the rows of the table's state table in the
// change's new shape into b: under their primary key, which no change
// touches, or, without one, re-keyed by the whole new row, with the
// multiplicities of rows that became equal (a column dropped) added up,
// or by the key ADD PRIMARY KEY gives the table.
func rewriteTableRows(store *storage.Store, b *pebble.Batch, a *ColumnChange) error {
	prefix := exec.ViewTablePrefix(a.Old.ID)
	keyed := len(a.Old.PrimaryKey) > 0
	n := len(a.Old.Columns)
	type counted struct {
		row   types.Row
		count uint64
	}
	var rekeyed map[string]*counted
	var order []string
	var newKey []int
	if !keyed && len(a.New.PrimaryKey) > 0 {
		for _, name := range a.New.PrimaryKey {
			newKey = append(newKey, slices.IndexFunc(a.New.Columns, func(c catalog.Column) bool { return c.Name == name }))
		}
	}
	err := storage.ScanPrefix(store.DB(), prefix, func(k, v []byte) error {
		row, count, err := exec.DecodeViewValue(v, n)
		if err != nil {
			return fmt.Errorf("read a row of table %s: %w", a.Old.Name, err)
		}
		out := make(types.Row, len(a.From))
		for i, j := range a.From {
			if j >= 0 {
				out[i] = row[j]
			} else {
				out[i] = a.Fill[i]
			}
		}
		if err := a.convertRow(row, out); err != nil {
			return err
		}
		if keyed {
			return b.Set(slices.Clone(k), exec.EncodeViewValue(out, count), nil)
		}
		if err := b.Delete(slices.Clone(k), nil); err != nil {
			return err
		}
		if rekeyed == nil {
			rekeyed = map[string]*counted{}
		}
		nk := string(keyenc.AppendRowValue(slices.Clone(prefix), out))
		if newKey != nil {
			// ADD PRIMARY KEY: the rows go under their key, which
			// sql found unique and not NULL.
			key := slices.Clone(prefix)
			for _, i := range newKey {
				key = keyenc.Append(key, out[i])
			}
			nk = string(key)
		}
		if c, ok := rekeyed[nk]; ok {
			c.count += count
			return nil
		}
		rekeyed[nk] = &counted{row: out, count: count}
		order = append(order, nk)
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range order {
		c := rekeyed[k]
		if err := b.Set([]byte(k), exec.EncodeViewValue(c.row, c.count), nil); err != nil {
			return err
		}
	}
	return nil
}

// convertRow applies the change's type conversions to out, a row in the
// new shape holding the old values, reading the old row. A keyed table's
// primary key must encode as before: its rows stay under their keys.
func (a *ColumnChange) convertRow(old, out types.Row) error {
	for i, src := range a.From {
		e, ok := a.Convert[src]
		if src < 0 || !ok {
			continue
		}
		v, err := e.Eval(old)
		if err != nil {
			return err
		}
		if isKey := slices.Contains(a.New.PrimaryKey, a.New.Columns[i].Name); isKey && !bytes.Equal(exec.AppendKey(nil, out[i]), exec.AppendKey(nil, v)) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "changing the type of primary key column %q to %s is not supported: its rows are stored under their keys", a.New.Columns[i].Name, a.New.Columns[i].Type)
		}
		out[i] = v
	}
	for i, m := range a.Shorten {
		v, err := expr.ApplyModifier(out[i], m, false)
		if err != nil {
			return err
		}
		if v != out[i] && slices.Contains(a.New.PrimaryKey, a.New.Columns[i].Name) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "lowering the length limit of primary key column %q to %s is not supported: a value would lose its trailing spaces, and rows are stored under their keys", a.New.Columns[i].Name, a.New.Columns[i].Type)
		}
		out[i] = v
	}
	for j, ck := range a.Checks {
		v, err := ck.Eval(out)
		if err != nil {
			return err
		}
		if !v.IsNull() && !v.Bool() {
			return sqlerr.New(sqlerr.CheckViolation, "check constraint %q of relation %q is violated by some row", a.CheckNames[j], a.New.Name)
		}
	}
	return nil
}

// clearIndexes removes the entries of indexes of object id in b.
func clearIndexes(b *pebble.Batch, id uint32, indexes []catalog.Index) error {
	for i := range indexes {
		p := exec.IndexPrefix(id, &indexes[i])
		if err := b.DeleteRange(p, storage.PrefixEnd(p), nil); err != nil {
			return err
		}
	}
	return nil
}

// rebuildIndexes writes, in the indexed batch b that holds a table's
// rewritten rows, the entries of the indexes the table keeps (a table
// without a primary key keys its rows by their values, so a rewrite
// moves them) and removes those of the indexes it dropped.
func rebuildIndexes(b *pebble.Batch, a *ColumnChange) error {
	if err := clearIndexes(b, a.Old.ID, a.DroppedIndexes); err != nil {
		return err
	}
	for i := range a.New.Indexes {
		ix := &a.New.Indexes[i]
		dup, err := exec.BuildIndex(b, b, a.New, ix)
		if err != nil {
			return err
		}
		if dup != nil {
			// Rows that were apart before stay apart in the indexed
			// columns, which the change leaves as they were.
			return fmt.Errorf("unique index %s repeats a key after the rewrite", ix.Name)
		}
	}
	return nil
}
