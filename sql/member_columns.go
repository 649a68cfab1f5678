package sql

import (
	"slices"

	"streamdb/catalog"
	"streamdb/types"
)

// sameTableColumns reports whether a and b have the same columns (names,
// types and member keys): rows read under one fit the other.
func sameTableColumns(a, b *catalog.Descriptor) bool {
	return slices.EqualFunc(a.Columns, b.Columns, func(x, y catalog.Column) bool {
		return x.Name == y.Name && x.Type == y.Type && x.MemberKey() == y.MemberKey()
	})
}

// memberColumns returns cols, the columns of d, under their member keys
// (see exec.MessageColumns): what a message of d is encoded with.
func memberColumns(d *catalog.Descriptor, cols []types.Column) []types.Column {
	keys := d.MemberKeys()
	if keys == nil || len(keys) != len(cols) {
		return cols
	}
	out := slices.Clone(cols)
	for i := range out {
		out[i].Name = keys[i]
	}
	return out
}
