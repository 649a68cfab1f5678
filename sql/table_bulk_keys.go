package sql

import (
	"cmp"
	"context"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/types"
)

// A streaming insert into a table with unique keys beyond a plain primary
// key check (ON CONFLICT DO NOTHING, a UNIQUE constraint, a unique index)
// or with foreign keys decides each row as it comes, in the statement's
// order, as PostgreSQL inserts row by row: NOT NULL and CHECK first, then
// the arbiter keys of ON CONFLICT DO NOTHING (a key taken skips the row),
// then the other unique keys (a key taken is 23505). A key is taken when
// the table holds it (as its writers see it: the stored state and the
// log) or when a row the statement kept before holds it; the keys the
// statement kept are in storage.KeySets, which move to disk past a
// bound, so the statement's memory does not grow with its rows. The
// foreign keys of the kept rows are checked a batch at a time against the
// referenced tables, whose logs the statement holds locked (bulkParents),
// so a referenced row cannot go before the commit. A foreign key onto
// the table itself cannot be: a row may reference one the statement
// inserts after it, so those references are checked at the
// end of the statement (table_bulk_selfref.go).

// bulkKeys checks the rows of one streaming insert against the unique
// keys of its table.
type bulkKeys struct {
	d     *catalog.Descriptor // the table as the catalog has it now
	ts    *tableState
	keys  []bulkKey
	seen  keySets
	pk    func(key []byte) (bool, error) // the table holds a primary key
	enc   [][]byte
	valid []bool
	// checks: the table has CHECK constraints; one returned by a batch's
	// check makes the batch go row by row, so that a key violation of an
	// earlier row is reported first, as PostgreSQL does.
	checks bool
}

// keySets are the sets of keys a statement kept, one per unique key
// (storage.KeySets: table_bulk.go opens them).
type keySets interface {
	Has(set int, key []byte) (bool, error)
	Add(set int, key []byte) error
	Close()
}

// bulkKey is one unique key of a table: the primary key or a unique index
// (a UNIQUE constraint's or one of its own).
type bulkKey struct {
	name    string
	cols    []int
	pk      bool
	index   *catalog.Index
	arbiter bool
}

// needsBulkKeys reports whether an insert into d (with arbiters arb, nil
// without ON CONFLICT) is checked by bulkKeys rather than by the plain
// streaming check of the primary key.
func needsBulkKeys(d *catalog.Descriptor, arb map[string]bool, parents []*catalog.Descriptor) bool {
	if arb != nil || len(parents) > 0 || hasConstraint(d, "u") {
		return true
	}
	for _, ix := range d.Indexes {
		if ix.Unique {
			return true
		}
	}
	return false
}

// newBulkKeys lists table ts.d's unique keys, marking arb's (by
// constraint name) as arbiters; open makes the key sets. Holding the
// table's log lock.
func (e *Engine) newBulkKeys(ctx context.Context, ts *tableState, arb map[string]bool, open func(n int) keySets) (*bulkKeys, error) {
	cur := e.current(ts.d)
	k := &bulkKeys{d: cur, ts: ts, checks: hasConstraint(cur, "c")}
	if ts.key != nil {
		name := catalog.PrimaryKeyName(cur.Name)
		k.keys = append(k.keys, bulkKey{name: name, cols: ts.key, pk: true, arbiter: arb[name]})
		taken, err := ts.KeyTakenInRange()
		if err != nil {
			return nil, err
		}
		k.pk = taken
	}
	for i := range cur.Indexes {
		ix := &cur.Indexes[i]
		if !ix.Unique {
			continue
		}
		pos, ok := exec.IndexColumns(ix, ts.cols)
		if !ok {
			continue
		}
		k.keys = append(k.keys, bulkKey{name: ix.Name, cols: pos, index: ix, arbiter: arb[ix.Name]})
	}
	k.seen = open(len(k.keys))
	k.enc = make([][]byte, len(k.keys))
	k.valid = make([]bool, len(k.keys))
	return k, nil
}

func (k *bulkKeys) close() { k.seen.Close() }

// admit checks a batch of new rows in order and returns the ones the
// statement inserts (out, reused), recording their keys.
func (k *bulkKeys) admit(changes, out []exec.Change) ([]exec.Change, error) {
	out = out[:0]
	rowByRow := false
	if k.checks {
		rowByRow = checkRows(k.d, k.ts.cols, changes) != nil
	}
	for i, ch := range changes {
		if err := checkNotNull(k.d, k.ts.cols, ch.Row); err != nil {
			return nil, err
		}
		if rowByRow {
			if err := checkRows(k.d, k.ts.cols, changes[i:i+1]); err != nil {
				return nil, err
			}
		}
		keep, err := k.admitRow(ch.Row)
		if err != nil {
			return nil, err
		}
		if keep {
			out = append(out, ch)
		}
	}
	return out, nil
}

// admitRow decides one row: skipped (a conflict on an arbiter), refused
// (on another unique key) or kept, its keys then recorded.
func (k *bulkKeys) admitRow(row types.Row) (bool, error) {
	for i := range k.keys {
		k.enc[i], k.valid[i] = k.keys[i].encode(k.enc[i][:0], row)
	}
	for _, arbiters := range []bool{true, false} {
		for i := range k.keys {
			key := &k.keys[i]
			if key.arbiter != arbiters || !k.valid[i] {
				continue
			}
			taken, err := k.taken(i)
			if err != nil {
				return false, err
			}
			if !taken {
				continue
			}
			if arbiters {
				return false, nil
			}
			return false, k.violation(key, row)
		}
	}
	for i := range k.keys {
		if k.valid[i] {
			if err := k.seen.Add(i, k.enc[i]); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// encode appends the key's values in row to buf; ok is false when one is
// NULL (NULLs are distinct; a primary key has none).
func (key *bulkKey) encode(buf []byte, row types.Row) ([]byte, bool) {
	if key.pk {
		return append(buf, rowKey(key.cols, row)...), true
	}
	if meta.AnyNullAt(row, key.cols) {
		return buf, false
	}
	return exec.AppendIndexValues(buf, row, key.cols), true
}

// taken reports whether the i'th key's value (k.enc[i]) is held by a row
// the statement kept or by the table.
func (k *bulkKeys) taken(i int) (bool, error) {
	v := k.enc[i]
	if has, err := k.seen.Has(i, v); has || err != nil {
		return has, err
	}
	key := &k.keys[i]
	if key.pk {
		return k.pk(v)
	}
	holders, err := k.ts.uniqueHolders(key.index, key.cols, v)
	if err != nil {
		return false, err
	}
	for _, n := range holders {
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}

// violation is PostgreSQL's 23505 for row on key.
func (k *bulkKeys) violation(key *bulkKey, row types.Row) error {
	if key.pk {
		return duplicateKey(k.d, k.ts.cols, key.cols, row)
	}
	return uniqueIndexViolation(key.index, k.ts.cols, row)
}

// insertParents returns the foreign keys of table d (d referencing
// another table) and the tables they reference, sorted by id; ok is false
// when one references d itself other than as bulkSelfRefs checks
// (table_bulk_selfref.go), which are left out.
func (e *Engine) insertParents(d *catalog.Descriptor) (links []fkLink, parents []*catalog.Descriptor, ok bool) {
	for _, l := range e.fkLinks() {
		if l.child.ID != d.ID {
			continue
		}
		if l.parent.ID == d.ID {
			if !selfRefStreams(l) {
				return nil, nil, false
			}
			continue
		}
		links = append(links, l)
		if !slices.ContainsFunc(parents, func(p *catalog.Descriptor) bool { return p.ID == l.parent.ID }) {
			parents = append(parents, l.parent)
		}
	}
	slices.SortFunc(parents, func(a, b *catalog.Descriptor) int { return cmp.Compare(a.ID, b.ID) })
	return links, parents, true
}

// sameTables reports whether a and b list the same tables in the same
// order.
func sameTables(a, b []*catalog.Descriptor) bool {
	return slices.EqualFunc(a, b, func(x, y *catalog.Descriptor) bool { return x.ID == y.ID })
}

// newInsertFK returns the foreign key check of a streaming insert's
// batches over links (the table's own), reading the referenced tables
// through state.
func (s *session) newInsertFK(links []fkLink, state func(*catalog.Descriptor) (*tableState, error)) *fkRun {
	return &fkRun{s: s, links: links, state: state, descs: map[uint32]*catalog.Descriptor{},
		changes: map[uint32][]exec.Change{}, derived: map[uint32][]exec.Change{}}
}

// checkInserted fails with 23503 if a row of changes (insertions into
// table d) references a key its referenced table does not hold.
func (f *fkRun) checkInserted(ctx context.Context, d *catalog.Descriptor, changes []exec.Change) error {
	clear(f.changes)
	clear(f.derived)
	f.deltas, f.overlays = nil, nil
	f.add(d, changes)
	_, err := f.run(ctx)
	return err
}
