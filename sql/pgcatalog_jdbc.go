package sql

import (
	"sort"

	"streamdb/pgcatalog"
	"streamdb/types"
)

// jdbcKeys answers pgjdbc's getPrimaryKeys and getIndexInfo: a row per
// primary key column of each relation the query names (the primary key is
// the only index), in key order.
func (a *catalogAnswer) jdbcKeys() []fieldRow {
	if !matches(a.schema, "public") {
		return nil
	}
	var out []fieldRow
	for _, r := range a.s.e.pgRelations() {
		if !matches(a.name, r.d.Name) {
			continue
		}
		for i, k := range r.pkColumns() {
			out = append(out, fieldRow{
				"table_schem": str("public"), "table_name": str(r.d.Name), "column_name": str(k),
				"key_seq": intD(int64(i + 1)), "pk_name": str(r.pkName()),
				"non_unique": types.NewBool(false), "index_name": str(r.pkName()), "type": intD(3),
				"ordinal_position": intD(int64(i + 1)), "asc_or_desc": str("A"),
				"cardinality": types.NewFloat(0), "pages": intD(1),
			})
		}
	}
	return out
}

// jdbcTypeCache answers pgjdbc's query for every type: pg_type's rows by
// descending OID (all are in pg_catalog, which is not on the explicit
// search path, so they all sort last and equal on it).
func jdbcTypeCache(e *Engine) []fieldRow {
	var out []fieldRow
	for _, r := range pgSystemTables["pg_catalog.pg_type"].rows(e) {
		out = append(out, fieldRow{"oid": r[0], "typname": r[1], "typtype": r[6]})
	}
	arrays := map[int64]bool{}
	for _, t := range pgcatalog.Types {
		arrays[t.OID] = t.Input == "array_in"
	}
	for _, f := range out {
		f["is_array"] = types.NewBool(arrays[f["oid"].I])
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["oid"].I > out[j]["oid"].I })
	return out
}
