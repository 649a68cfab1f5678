package sql

import (
	"context"
	"slices"
	"sort"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

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
		b = keyenc.Append(b, c)
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

// fkDelta sums the first upto changes to a foreign key's parent by
// referenced key.
type fkDelta struct {
	upto int
	n    map[string]int
}

// rowsBefore returns table d's rows before the changes.
func (f *fkRun) rowsBefore(ctx context.Context, d *catalog.Descriptor) ([]types.Row, error) {
	if rows, ok := f.before[d.ID]; ok {
		return rows, nil
	}
	ts, err := f.state(d)
	if err != nil {
		return nil, err
	}
	rows, err := ts.rows(ctx)
	if err != nil {
		return nil, err
	}
	f.before[d.ID] = rows
	return rows, nil
}

// rowsAfter returns table d's rows with all changes so far applied.
func (f *fkRun) rowsAfter(ctx context.Context, d *catalog.Descriptor) ([]types.Row, error) {
	rows, err := f.rowsBefore(ctx, d)
	if err != nil {
		return nil, err
	}
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	var key []int
	if len(d.PrimaryKey) > 0 {
		key = pkIndexes(d, cols)
	}
	return applyChanges(key, slices.Clone(rows), f.changes[d.ID]), nil
}

// parentHas reports whether l's parent holds a row with key (the
// referenced columns' values encoded as fkKey) after the changes.
func (f *fkRun) parentHas(ctx context.Context, l fkLink, key string, cache map[string]map[string]bool) (bool, error) {
	if l.pkOrder != nil {
		return f.parentHasByKey(l, key)
	}
	keys, ok := cache[l.con.Name+"\x00"+l.child.Name]
	if !ok {
		rows, err := f.rowsAfter(ctx, l.parent)
		if err != nil {
			return false, err
		}
		keys = map[string]bool{}
		for _, r := range rows {
			if k, ok, err := fkKey(pick(r, l.pcols), l.ptypes); err != nil {
				return false, err
			} else if ok {
				keys[k] = true
			}
		}
		cache[l.con.Name+"\x00"+l.child.Name] = keys
	}
	return keys[key], nil
}

// parentHasByKey is parentHas for a foreign key referencing its parent's
// primary key: a point read of the parent's state, then its changes.
func (f *fkRun) parentHasByKey(l fkLink, key string) (bool, error) {
	chs := f.changes[l.parent.ID]
	ck := l.child.Name + "\x00" + l.con.Name
	d, ok := f.deltas[ck]
	if !ok || d.upto != len(chs) {
		// The parent's changes so far, by key: built once per state of
		// the changes, not per row looked up.
		d = fkDelta{upto: len(chs), n: map[string]int{}}
		for _, ch := range chs {
			k, ok, err := fkKey(pick(ch.Row, l.pcols), l.ptypes)
			if err != nil {
				return false, err
			}
			if ok {
				d.n[k] += int(ch.Sign)
			}
		}
		if f.deltas == nil {
			f.deltas = map[string]fkDelta{}
		}
		f.deltas[ck] = d
	}
	n := d.n[key]
	ts, err := f.state(l.parent)
	if err != nil {
		return false, err
	}
	// The state's key is the primary key columns in key order.
	pk := []byte(key)
	if !sort.IntsAreSorted(l.pkOrder) {
		vals := make([]types.Datum, len(l.pkOrder))
		rest := pk
		for i := range vals {
			if vals[i], rest, err = keyenc.Decode(rest); err != nil {
				return false, err
			}
		}
		pk = nil
		for _, i := range l.pkOrder {
			pk = keyenc.Append(pk, vals[i])
		}
	}
	row, err := ts.lookup(pk)
	if err != nil {
		return false, err
	}
	if row != nil {
		n++
	}
	return n > 0, nil
}

// removedKeys returns the referenced keys of l that the changes to l's
// parent removed (held before, not after), each with the row that

// netChanges returns what changes do in all, as deletions then insertions
// of whole rows: a row an action inserted and a later action changed
// again is left out.
func netChanges(chs []exec.Change) []exec.Change {
	count := map[string]int{}
	var order []string
	row := map[string]types.Row{}
	for _, ch := range chs {
		k := string(keyenc.AppendRowValue(nil, ch.Row))
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
