package meta

import (
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The descriptor edits of ALTER TABLE's column actions, made on New once
// sql has bound the action and checked what PostgreSQL would refuse (a
// view reading the column, a primary key column, privileges). Messages
// are JSON objects whose members map to columns by member key
// (catalog.Column.MemberKey), so a table's history stays readable: a new
// column takes a member key no message of the table used yet, a dropped
// column's key stays retired (RetiredKeys), and a renamed column keeps
// its key.

// NewColumnChange starts a change of table or stream old: New is a copy
// of its descriptor, every column kept where it is.
func NewColumnChange(old *catalog.Descriptor) ColumnChange {
	a := ColumnChange{Old: old, New: CloneDescriptor(old), Fill: make([]types.Datum, len(old.Columns))}
	for i := range old.Columns {
		a.From = append(a.From, i)
	}
	return a
}

// CloneDescriptor copies d with its own columns, retired keys and
// primary key, which a change edits in place.
func CloneDescriptor(d *catalog.Descriptor) *catalog.Descriptor {
	out := *d
	out.Columns = slices.Clone(d.Columns)
	out.RetiredKeys = slices.Clone(d.RetiredKeys)
	out.PrimaryKey = slices.Clone(d.PrimaryKey)
	return &out
}

func (a *ColumnChange) isTable() bool { return a.New.Kind == catalog.KindTable }

// AddColumn appends col, whose value in the rows written before it is
// fill, under a member key of its own (MemberKey). A table's rows are
// rewritten.
func (a *ColumnChange) AddColumn(col catalog.Column, fill types.Datum) error {
	key, err := a.MemberKey(col.Name)
	if err != nil {
		return err
	}
	if key != col.Name {
		col.Key = key
	}
	a.New.Columns = append(a.New.Columns, col)
	a.From = append(a.From, -1)
	a.Fill = append(a.Fill, fill)
	a.Rewrite = a.Rewrite || a.isTable()
	return nil
}

// MemberKey chooses the member key of a new column: its name, unless a
// column of a table reads or read that member (then name#n); a stream's
// column reads its producers' member of its name.
func (a *ColumnChange) MemberKey(name string) (string, error) {
	taken := func(k string) (string, bool) {
		for _, c := range a.New.Columns {
			if c.MemberKey() == k {
				return c.Name, true
			}
		}
		return "", slices.Contains(a.New.RetiredKeys, k)
	}
	if !a.isTable() {
		if other, ok := taken(name); ok && other != "" {
			return "", sqlerr.New(sqlerr.DuplicateColumn, "column %q of stream %q already reads the member %q of its messages (it was renamed)", other, a.New.Name, name).
				WithHint("Rename %s back, or add the column under another name.", other)
		}
		return name, nil
	}
	key := name
	for n := 2; ; n++ {
		if _, ok := taken(key); !ok {
			return key, nil
		}
		key = fmt.Sprintf("%s#%d", name, n)
	}
}

// DropColumn removes New's column i with, on a table, the table's own
// constraints and indexes that involve it (as PostgreSQL drops them;
// the index entries go in the commit) and retires its member key. A
// table's rows are rewritten.
func (a *ColumnChange) DropColumn(i int) {
	c := a.New.Columns[i]
	if a.isTable() {
		a.New.Constraints = slices.DeleteFunc(slices.Clone(a.New.Constraints), func(k catalog.Constraint) bool {
			return slices.Contains(k.Columns, c.Name)
		})
		if len(a.New.Constraints) == 0 {
			a.New.Constraints = nil
		}
		var keep []catalog.Index
		for _, ix := range a.New.Indexes {
			if slices.ContainsFunc(ix.Columns, func(x catalog.IndexColumn) bool { return x.Name == c.Name }) {
				a.DroppedIndexes = append(a.DroppedIndexes, ix)
			} else {
				keep = append(keep, ix)
			}
		}
		a.New.Indexes = keep
		if !slices.Contains(a.New.RetiredKeys, c.MemberKey()) {
			a.New.RetiredKeys = append(a.New.RetiredKeys, c.MemberKey())
		}
	}
	a.New.Columns = slices.Delete(a.New.Columns, i, i+1)
	a.From = slices.Delete(a.From, i, i+1)
	a.Fill = slices.Delete(a.Fill, i, i+1)
	a.Rewrite = a.Rewrite || a.isTable()
}

// RenameColumn renames New's column i to to, keeping its member key, and
// wherever the catalog names it besides the column itself, as
// PostgreSQL's references by attribute number follow a rename: the
// primary key, the table's indexes, its constraints (CHECK text
// included), generated columns' expressions, and, written with the
// change (Others), the sequences of owned that it owns and the foreign
// keys of the tables of referencing that reference it. renameRefs
// renames the column in an expression's text (sql parses it).
func (a *ColumnChange) RenameColumn(i int, to string, renameRefs func(text, from, to string) (string, error), owned, referencing []*catalog.Descriptor) error {
	c := &a.New.Columns[i]
	from := c.Name
	c.Key = c.MemberKey()
	c.Name = to
	if c.Key == c.Name {
		c.Key = ""
	}
	ren := func(names []string) []string {
		out := slices.Clone(names)
		for j, n := range out {
			if n == from {
				out[j] = to
			}
		}
		return out
	}
	a.New.PrimaryKey = ren(a.New.PrimaryKey)
	a.New.Indexes = slices.Clone(a.New.Indexes)
	for j := range a.New.Indexes {
		x := &a.New.Indexes[j]
		x.Columns = slices.Clone(x.Columns)
		for k := range x.Columns {
			if x.Columns[k].Name == from {
				x.Columns[k].Name = to
			}
		}
	}
	a.New.Constraints = slices.Clone(a.New.Constraints)
	for j := range a.New.Constraints {
		k := &a.New.Constraints[j]
		k.Columns = ren(k.Columns)
		if k.Type == "c" {
			text, err := renameRefs(k.Check, from, to)
			if err != nil {
				return err
			}
			k.Check = text
		}
		if k.Type == "f" && k.RefTable == a.New.Name {
			k.RefColumns = ren(k.RefColumns)
		}
	}
	for j := range a.New.Columns {
		if g := a.New.Columns[j].Generated; g != "" {
			text, err := renameRefs(g, from, to)
			if err != nil {
				return err
			}
			a.New.Columns[j].Generated = text
		}
	}
	if !a.isTable() {
		return nil
	}
	for _, q := range owned {
		if q.Sequence.OwnedByColumn == from {
			x := CloneDescriptor(q)
			seq := *q.Sequence
			seq.OwnedByColumn = to
			x.Sequence = &seq
			a.Others = append(a.Others, x)
		}
	}
	for _, x := range referencing {
		if x.ID == a.New.ID {
			continue
		}
		if i := slices.IndexFunc(a.Others, func(o *catalog.Descriptor) bool { return o.ID == x.ID }); i >= 0 {
			x = a.Others[i]
		} else {
			x = CloneDescriptor(x)
			x.Constraints = slices.Clone(x.Constraints)
			a.Others = append(a.Others, x)
		}
		for j := range x.Constraints {
			k := &x.Constraints[j]
			if k.Type == "f" && k.RefTable == a.New.Name {
				k.RefColumns = ren(k.RefColumns)
			}
		}
	}
	return nil
}
