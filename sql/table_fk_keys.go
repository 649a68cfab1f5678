package sql

import (
	"bytes"
	"context"
	"slices"
	"sort"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/meta"
	"streamdb/types"
)

// A foreign key's checks and actions read the other table by key, never
// whole: a referenced key is looked up in the parent's keyed state (its
// primary key), or, for a UNIQUE constraint's columns, in the unique index
// that backs it (table_unique.go) or in a unique index of its own
// (parentUniqueIndex); the rows referencing a key are found under the
// child's primary key when the referencing columns lead it, or in an index
// that leads with them. Without such a key or index the table is streamed
// once per statement and round of actions, holding only the rows that
// match (PostgreSQL scans then too). Every read sees the table as the
// statement or commit found it (tableState: snapshot and pending
// changes) with the changes so far applied on top (fkOverlay).

// fkCheckBatch is how many rows ALTER TABLE ... ADD FOREIGN KEY checks
// at once as they stream by: the memory it holds, and, for a parent
// that has no key or index for the referenced columns, the rows read per
// pass over it.
const fkCheckBatch = 50_000

// fkKey encodes vals cast to types ts; ok is false when one is NULL.
func fkKey(vals []types.Datum, ts []types.Type) (string, bool, error) {
	var b []byte
	for i, v := range vals {
		if v.IsNull() {
			return "", false, nil
		}
		c, err := expr.CastDatum(v, ts[i])
		if err != nil {
			return "", false, err
		}
		b = exec.AppendKey(b, c)
	}
	return string(b), true, nil
}

func pick(row types.Row, cols []int) []types.Datum {
	out := make([]types.Datum, len(cols))
	for i, c := range cols {
		out[i] = row[c]
	}
	return out
}

// keyParts splits a key (fkKey) into its columns' encodings.
func keyParts(key string) ([]string, error) {
	var parts []string
	rest := []byte(key)
	for len(rest) > 0 {
		next, err := meta.SkipKeyValues(rest, 1)
		if err != nil {
			return nil, err
		}
		parts = append(parts, string(rest[:len(rest)-len(next)]))
		rest = next
	}
	return parts, nil
}

// reorderKey returns key's column encodings in the order order gives: the
// i-th is key's order[i]-th.
func reorderKey(key string, order []int) (string, error) {
	parts, err := keyParts(key)
	if err != nil {
		return "", err
	}
	var b []byte
	for _, i := range order {
		b = append(b, parts[i]...)
	}
	return string(b), nil
}

// positions returns, for each of want, its place in have; nil unless
// want and have hold the same columns.
func positions(want, have []int) []int {
	if len(want) != len(have) {
		return nil
	}
	out := make([]int, len(want))
	for i, c := range want {
		if out[i] = slices.Index(have, c); out[i] < 0 {
			return nil
		}
	}
	return out
}

// fkDelta sums the first upto changes to a foreign key's parent by
// referenced key.
type fkDelta struct {
	upto int
	n    map[string]int
}

// parentDelta returns the parent's changes so far summed by l's
// referenced key: built once per state of the changes, not per key.
func (f *fkRun) parentDelta(l fkLink) (fkDelta, error) {
	chs := f.changes[l.parent.ID]
	ck := l.child.Name + "\x00" + l.con.Name
	d, ok := f.deltas[ck]
	if ok && d.upto == len(chs) {
		return d, nil
	}
	d = fkDelta{upto: len(chs), n: map[string]int{}}
	for _, ch := range chs {
		k, ok, err := fkKey(pick(ch.Row, l.pcols), l.ptypes)
		if err != nil {
			return d, err
		}
		if ok {
			d.n[k] += int(ch.Sign)
		}
	}
	if f.deltas == nil {
		f.deltas = map[string]fkDelta{}
	}
	f.deltas[ck] = d
	return d, nil
}

// parentHolds reports which of keys (l's referenced columns' values,
// fkKey) l's parent holds after the changes.
func (f *fkRun) parentHolds(ctx context.Context, l fkLink, keys []string) (map[string]bool, error) {
	out := make(map[string]bool, len(keys))
	if l.pkOrder != nil {
		for _, k := range keys {
			has, err := f.parentHasByKey(l, k)
			if err != nil {
				return nil, err
			}
			out[k] = has
		}
		return out, nil
	}
	if ix, order := parentUniqueIndex(l); ix != nil {
		for _, k := range keys {
			has, err := f.parentHasByIndex(l, ix, order, k)
			if err != nil {
				return nil, err
			}
			out[k] = has
		}
		return out, nil
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	rows, err := f.rowsWithKeys(ctx, l.parent, l.pcols, l.ptypes, want)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if k, ok, err := fkKey(pick(r, l.pcols), l.ptypes); err != nil {
			return nil, err
		} else if ok {
			out[k] = true
		}
	}
	return out, nil
}

// parentUniqueIndex returns the unique index of l's parent (a UNIQUE
// constraint's, or one of its own) on exactly l's referenced columns,
// with the place of each of its columns among them; nil when there is
// none or a referenced column's type differs from the parent column's
// (the stored values would encode otherwise).
func parentUniqueIndex(l fkLink) (*catalog.Index, []int) {
	cols, err := l.parent.Schema()
	if err != nil {
		return nil, nil
	}
	for i, c := range l.pcols {
		if cols[c].Type != l.ptypes[i] {
			return nil, nil
		}
	}
	for i := range l.parent.Indexes {
		ix := &l.parent.Indexes[i]
		if !ix.Unique {
			continue
		}
		pos, ok := exec.IndexColumns(ix, cols)
		if !ok {
			continue
		}
		if order := positions(pos, l.pcols); order != nil {
			return ix, order
		}
	}
	return nil, nil
}

// parentHasByIndex is parentHolds through a unique index of the parent
// (parentUniqueIndex): the rows holding the key in the index, then the
// changes so far.
func (f *fkRun) parentHasByIndex(l fkLink, ix *catalog.Index, order []int, key string) (bool, error) {
	d, err := f.parentDelta(l)
	if err != nil {
		return false, err
	}
	ts, err := f.state(l.parent)
	if err != nil {
		return false, err
	}
	vals, err := reorderKey(key, order)
	if err != nil {
		return false, err
	}
	pos, _ := exec.IndexColumns(ix, ts.cols)
	holders, err := ts.uniqueHolders(ix, pos, []byte(vals))
	if err != nil {
		return false, err
	}
	n := d.n[key]
	for _, k := range holders {
		n += k
	}
	return n > 0, nil
}

// parentHasByKey is parentHolds for a foreign key referencing its
// parent's primary key: a point read of the parent's state, then its
// changes.
func (f *fkRun) parentHasByKey(l fkLink, key string) (bool, error) {
	d, err := f.parentDelta(l)
	if err != nil {
		return false, err
	}
	ts, err := f.state(l.parent)
	if err != nil {
		return false, err
	}
	// The state's key is the primary key columns in key order.
	pk := key
	if !sort.IntsAreSorted(l.pkOrder) {
		if pk, err = reorderKey(key, l.pkOrder); err != nil {
			return false, err
		}
	}
	row, err := ts.Lookup([]byte(pk))
	if err != nil {
		return false, err
	}
	n := d.n[key]
	if row != nil {
		n++
	}
	return n > 0, nil
}

// fkOverlay is what the changes so far to one table make of the rows
// they touch: by row identity (rowKey), the rows it has after them.
type fkOverlay struct {
	upto  int // changes applied
	order []string
	rows  map[string][]types.Row
}

// overlay returns table d's fkOverlay, brought up to its changes so far.
func (f *fkRun) overlay(d *catalog.Descriptor, ts *tableState) (*fkOverlay, error) {
	if f.overlays == nil {
		f.overlays = map[uint32]*fkOverlay{}
	}
	o := f.overlays[d.ID]
	if o == nil {
		o = &fkOverlay{rows: map[string][]types.Row{}}
		f.overlays[d.ID] = o
	}
	chs := f.changes[d.ID]
	for _, ch := range chs[o.upto:] {
		id := string(rowKey(ts.key, ch.Row))
		rows, seen := o.rows[id]
		if !seen {
			o.order = append(o.order, id)
			if ts.key != nil {
				r, err := ts.Lookup([]byte(id))
				if err != nil {
					return nil, err
				}
				if r != nil {
					rows = []types.Row{r}
				}
			} else {
				n, err := ts.CountOf([]byte(id))
				if err != nil {
					return nil, err
				}
				for range n {
					rows = append(rows, ch.Row)
				}
			}
		}
		// As applyChanges: a deletion takes one row of the identity away,
		// an insertion replaces a keyed table's row or adds one.
		switch {
		case ch.Sign < 0:
			if len(rows) > 0 {
				rows = rows[:len(rows)-1]
			}
		case ts.key != nil:
			rows = []types.Row{ch.Row}
		default:
			rows = append(rows, ch.Row)
		}
		o.rows[id] = rows
	}
	o.upto = len(chs)
	return o, nil
}

// rowsWithKeys returns the rows table d holds after the changes so far
// whose columns cols, cast to keyTypes, encode (fkKey) to one of keys.
func (f *fkRun) rowsWithKeys(ctx context.Context, d *catalog.Descriptor, cols []int, keyTypes []types.Type, keys map[string]bool) ([]types.Row, error) {
	ts, err := f.state(d)
	if err != nil {
		return nil, err
	}
	o, err := f.overlay(d, ts)
	if err != nil {
		return nil, err
	}
	matches := func(r types.Row) (bool, error) {
		k, ok, err := fkKey(pick(r, cols), keyTypes)
		return ok && keys[k], err
	}
	base, err := ts.rowsWithValues(ctx, d.Indexes, cols, keyTypes, keys, matches)
	if err != nil {
		return nil, err
	}
	var out []types.Row
	for _, r := range base {
		if _, changed := o.rows[string(rowKey(ts.key, r))]; !changed {
			out = append(out, r)
		}
	}
	for _, id := range o.order {
		for _, r := range o.rows[id] {
			ok, err := matches(r)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// keyPath is a way to the identities of a keyed table's rows with given
// values in some of its columns: under a prefix of its state (the
// leading columns of its primary key) or of one of its indexes (indexes
// its leading columns).
type keyPath struct {
	prefix []byte // of the state table or the index's entries
	order  []int  // the looked-up columns in the path's key order, as positions among them
	skip   int    // values before the row's identity in an entry: an index's columns
	whole  bool   // the whole primary key: the values are the identity
}

// keyPathFor returns a keyPath to the rows by their columns cols, or nil
// when there is none: the table has no primary key, a column's type is not
// the key's (the stored values would encode otherwise), or no key or
// index leads with cols.
func (ts *tableState) keyPathFor(indexes []catalog.Index, cols []int, keyTypes []types.Type) *keyPath {
	if ts.key == nil {
		return nil
	}
	for i, c := range cols {
		if ts.cols[c].Type != keyTypes[i] {
			return nil
		}
	}
	m := len(cols)
	if m <= len(ts.key) {
		if order := positions(ts.key[:m], cols); order != nil {
			return &keyPath{prefix: exec.ViewTablePrefix(ts.d.ID), order: order, whole: m == len(ts.key)}
		}
	}
	var best *keyPath
	for i := range indexes {
		ix := &indexes[i]
		pos, ok := exec.IndexColumns(ix, ts.cols)
		if !ok || len(pos) < m {
			continue
		}
		order := positions(pos[:m], cols)
		if order == nil {
			continue
		}
		if best == nil || ix.Unique {
			best = &keyPath{prefix: exec.IndexPrefix(ts.d.ID, ix), order: order, skip: len(pos)}
		}
		if ix.Unique {
			break
		}
	}
	return best
}

// ids hands add the identities the path finds for key (fkKey of the
// looked-up columns) in ts's snapshot; some may hold other values now.
func (p *keyPath) ids(ts *tableState, key string, add func(id string)) error {
	vals, err := reorderKey(key, p.order)
	if err != nil {
		return err
	}
	if p.whole {
		add(vals)
		return nil
	}
	from := append(bytes.Clone(p.prefix), vals...)
	return ts.EachStoredKey(from, func(key []byte) error {
		id, err := meta.SkipKeyValues(key[len(p.prefix):], p.skip)
		if err == nil {
			add(string(id))
		}
		return err
	})
}

// rowsWithValues returns the table's rows (pending changes applied) that
// matches holds for, matches being true only for rows whose columns cols,
// cast to keyTypes, encode to one of keys: read through a keyPath when
// the table has one, else streamed by, holding only the rows that match.
func (ts *tableState) rowsWithValues(ctx context.Context, indexes []catalog.Index, cols []int, keyTypes []types.Type,
	keys map[string]bool, matches func(types.Row) (bool, error)) ([]types.Row, error) {
	var out []types.Row
	p := ts.keyPathFor(indexes, cols, keyTypes)
	if p != nil && ts.spill != nil && ts.spill.setOf(cols) < 0 {
		p = nil // the spill does not keep its rows by these values
	}
	if p == nil {
		err := ts.EachRow(ctx, func(r types.Row) error {
			ok, err := matches(r)
			if ok {
				out = append(out, r)
			}
			return err
		})
		return out, err
	}
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		if err := p.ids(ts, k, add); err != nil {
			return nil, err
		}
	}
	// Rows the snapshot does not have under those values yet.
	for _, k := range sorted {
		spilled, err := ts.spilledWith(cols, []byte(k))
		if err != nil {
			return nil, err
		}
		for _, id := range spilled {
			add(id)
		}
	}
	for _, ch := range ts.PendingChanges() {
		if ch.Sign > 0 {
			if ok, err := matches(ch.Row); err != nil {
				return nil, err
			} else if ok {
				add(string(rowKey(ts.key, ch.Row)))
			}
		}
	}
	for _, id := range ids {
		r, err := ts.Lookup([]byte(id))
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		if ok, err := matches(r); err != nil {
			return nil, err
		} else if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// netChanges returns what changes do in all, as deletions then insertions
// of whole rows: a row an action inserted and a later action changed
// again is left out.
func netChanges(chs []exec.Change) []exec.Change {
	count := map[string]int{}
	var order []string
	row := map[string]types.Row{}
	for _, ch := range chs {
		k := string(meta.RowKey(nil, ch.Row))
		if _, ok := row[k]; !ok {
			order = append(order, k)
			row[k] = ch.Row
		}
		count[k] += int(ch.Sign)
	}
	var out []exec.Change
	for _, sign := range []int8{exec.Delete, exec.Insert} {
		for _, k := range order {
			n := count[k]
			for ; n < 0 && sign == exec.Delete; n++ {
				out = append(out, exec.Change{Row: row[k], Sign: exec.Delete})
			}
			for ; n > 0 && sign == exec.Insert; n-- {
				out = append(out, exec.Change{Row: row[k], Sign: exec.Insert})
			}
		}
	}
	return out
}
