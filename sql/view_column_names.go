package sql

import (
	"maps"

	"streamdb/catalog"
)

// RENAME COLUMN of a table column plain views read: PostgreSQL's views
// read columns by position, so they keep working. A streamdb view keeps
// its query's text, so the view records the name its text uses for the
// column (catalog.Descriptor.QueryColumnNames) and is bound seeing the
// column under that name (binder/plain_view_names.go).

// keepQueryColumnName returns a copy of plain view v that reads column
// key of table id, renamed from name to newName, under the name its
// text uses: name, unless an earlier rename recorded another. Renamed
// back to the name in the text, the column needs no entry.
func keepQueryColumnName(v *catalog.Descriptor, id uint32, key, name, newName string) *catalog.Descriptor {
	out := *v
	out.QueryColumnNames = make(map[uint32]map[string]string, len(v.QueryColumnNames)+1)
	for t, names := range v.QueryColumnNames {
		out.QueryColumnNames[t] = maps.Clone(names)
	}
	names := out.QueryColumnNames[id]
	if names == nil {
		names = map[string]string{}
		out.QueryColumnNames[id] = names
	}
	if _, ok := names[key]; !ok {
		names[key] = name
	}
	if names[key] == newName {
		delete(names, key)
	}
	if len(names) == 0 {
		delete(out.QueryColumnNames, id)
	}
	if len(out.QueryColumnNames) == 0 {
		out.QueryColumnNames = nil
	}
	return &out
}

// keepViewColumnNames writes the views a RENAME COLUMN of t changes
// (keepQueryColumnName). The caller holds ddlMu.
func (e *Engine) keepViewColumnNames(t *catalog.Descriptor, views []*catalog.Descriptor) error {
	for _, v := range views {
		old, ok := e.lookup(v.Name)
		if !ok || old.ID != v.ID {
			continue
		}
		if err := e.replaceDescriptor(old, v); err != nil {
			return err
		}
		e.log.Info("view keeps a renamed column's name", "view", v.Name, "table", t.Name)
	}
	return nil
}
