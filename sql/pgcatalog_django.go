package sql

import (
	"streamdb/sql/front"
	"streamdb/types"
)

// djangoConstraints answers Django's get_constraints query on
// pg_constraint: the primary key of the table the query names, its
// columns in key order, and its UNIQUE, CHECK and FOREIGN KEY
// constraints (a foreign key's target as "table.column").
func (a *catalogAnswer) djangoConstraints() []fieldRow {
	var out []fieldRow
	for _, r := range a.s.e.pgRelations() {
		if !matches(a.name, r.d.Name) {
			continue
		}
		if len(r.d.PrimaryKey) > 0 {
			out = append(out, fieldRow{"conname": str(r.pkName()), "columns": textArray(r.pkColumns()), "contype": str("p")})
		}
		for _, c := range r.d.Constraints {
			row := fieldRow{"conname": str(c.Name), "columns": textArray(c.Columns), "contype": str(c.Type)}
			if c.Type == "f" {
				row["fk_target"] = str(c.RefTable + "." + c.RefColumns[0])
			}
			out = append(out, row)
		}
	}
	return out
}

// djangoIndexes answers Django's get_constraints query on pg_index: the
// primary key's index, ascending on each column, as btree.
func (a *catalogAnswer) djangoIndexes() []fieldRow {
	var out []fieldRow
	for _, r := range a.s.e.pgRelations() {
		if matches(a.name, r.d.Name) {
			out = append(out, r.djangoSecondaryIndexes()...)
		}
		if !matches(a.name, r.d.Name) || len(r.d.PrimaryKey) == 0 {
			continue
		}
		orders := make([]string, len(r.d.PrimaryKey))
		for i := range orders {
			orders[i] = "ASC"
		}
		out = append(out, fieldRow{"indexname": str(r.pkName()), "columns": textArray(r.pkColumns()),
			"unique": types.NewBool(true), "primary": types.NewBool(true), "orders": textArray(orders),
			"amname": str("btree")})
	}
	return out
}

func textArray(elems []string) types.Datum {
	ds := make([]types.Datum, len(elems))
	for i, e := range elems {
		ds[i] = str(e)
	}
	return str(types.FormatArray(ds))
}

// djangoItemType is the type of a Django query's column (text unless
// listed).
func djangoItemType(shape front.CatalogShape, item string) (types.Type, bool) {
	if shape != front.CatalogDjangoConstraints && shape != front.CatalogDjangoIndexes {
		return types.Unknown, false
	}
	switch item {
	case "columns", "orders":
		return types.ArrayOf(types.Text), true
	case "unique", "primary":
		return types.Bool, true
	}
	return types.Text, true
}
