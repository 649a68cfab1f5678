package binder

import (
	"slices"

	"streamdb/catalog"
)

// A plain view keeps its query's text as written, and PostgreSQL lets a
// column it reads be renamed (the view reads it by position). So a
// RENAME COLUMN records, in the view, the name its text uses
// (catalog.Descriptor.QueryColumnNames), and the view's text is bound
// against a catalog that shows the renamed columns under those names.

// viewNames is the catalog a plain view's query is bound against: cat,
// with the tables whose columns were renamed since the view was created
// shown under the names the view's text uses.
type viewNames struct {
	Catalog
	view *catalog.Descriptor
}

// catalogForView returns the catalog view's query is bound against. A
// view read inside another view's query sees the tables as they are,
// with its own names only.
func catalogForView(cat Catalog, view *catalog.Descriptor) Catalog {
	if vn, ok := cat.(viewNames); ok {
		cat = vn.Catalog
	}
	if len(view.QueryColumnNames) == 0 {
		return cat
	}
	return viewNames{Catalog: cat, view: view}
}

func (c viewNames) Lookup(name string) (*catalog.Descriptor, bool) {
	d, ok := c.Catalog.Lookup(name)
	if !ok {
		return d, ok
	}
	names := c.view.QueryColumnNames[d.ID]
	if len(names) == 0 {
		return d, ok
	}
	return withQueryNames(d, names), true
}

// withQueryNames returns a copy of table d whose columns with a member
// key in names have the name given there. A column that has taken one
// of those names since is hidden from the view's text (its name is
// made one no query can write), as it did not exist for the view.
// Columns keep their member keys, by which rows are read.
func withQueryNames(d *catalog.Descriptor, names map[string]string) *catalog.Descriptor {
	used := map[string]bool{}
	for _, n := range names {
		used[n] = true
	}
	out := *d
	out.Columns = slices.Clone(d.Columns)
	renamed := map[string]string{}
	for i := range out.Columns {
		c := &out.Columns[i]
		key := c.MemberKey()
		name, ok := names[key]
		switch {
		case ok:
		case used[c.Name]:
			name = "\x00" + c.Name
		default:
			continue
		}
		renamed[c.Name] = name
		c.Key, c.Name = key, name
	}
	out.PrimaryKey = slices.Clone(d.PrimaryKey)
	for i, k := range out.PrimaryKey {
		if n, ok := renamed[k]; ok {
			out.PrimaryKey[i] = n
		}
	}
	return &out
}
