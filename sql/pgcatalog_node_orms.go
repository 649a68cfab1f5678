package sql

import (
	"sort"
	"strconv"
	"strings"

	"streamdb/sql/front"
	"streamdb/types"
)

// Catalog pieces the Node.js ORMs read: Sequelize's showIndex query
// (front/node_orms.go), pg_statio_all_tables, which its describeTable
// joins to read column comments, and
// information_schema.constraint_column_usage, where it finds foreign
// keys' targets.

func init() {
	// pg_statio_all_tables: one row per table and materialized view with
	// its I/O counters, which streamdb does not keep (zero).
	pgSystemTables["pg_catalog.pg_statio_all_tables"] = pgSystemTableDef{
		cols: cols("relid", types.Int8, "schemaname", types.Text, "relname", types.Text,
			"heap_blks_read", types.Int8, "heap_blks_hit", types.Int8, "idx_blks_read", types.Int8, "idx_blks_hit", types.Int8,
			"toast_blks_read", types.Int8, "toast_blks_hit", types.Int8, "tidx_blks_read", types.Int8, "tidx_blks_hit", types.Int8),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				if r.relkind != "r" && r.relkind != "m" {
					continue
				}
				rows = append(rows, types.Row{intD(int64(r.oid)), str("public"), str(r.d.Name),
					intD(0), intD(0), intD(0), intD(0), types.Null, types.Null, types.Null, types.Null})
			}
			return rows
		},
	}
	// information_schema.constraint_column_usage: Sequelize reads a
	// table's foreign keys' targets from it (sync, dropping tables).
	pgSystemTables["information_schema.constraint_column_usage"] = pgSystemTableDef{
		cols: cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
			"column_name", types.Text, "constraint_catalog", types.Text, "constraint_schema", types.Text,
			"constraint_name", types.Text),
		rows: func(e *Engine) []types.Row { return e.constraintColumnUsage() },
	}
}

// constraintColumnUsage are information_schema.constraint_column_usage's
// rows: the columns each constraint uses (the primary key's, a UNIQUE's
// or CHECK's columns), a foreign key's being the columns it references.
func (e *Engine) constraintColumnUsage() []types.Row {
	var out []types.Row
	row := func(table, col, con string) types.Row {
		return types.Row{str(infoSchemaCatalog), str("public"), str(table), str(col),
			str(infoSchemaCatalog), str("public"), str(con)}
	}
	for _, r := range e.pgRelations() {
		if r.relkind != "r" {
			continue
		}
		for _, k := range r.d.PrimaryKey {
			out = append(out, row(r.d.Name, k, r.pkName()))
		}
		for _, c := range r.d.Constraints {
			table, cols := r.d.Name, c.Columns
			if c.Type == "f" {
				table, cols = c.RefTable, c.RefColumns
			}
			for _, col := range cols {
				out = append(out, row(table, col, c.Name))
			}
		}
	}
	return out
}

// sequelizeItemType is the type of a column of Sequelize's index query.
func sequelizeItemType(shape front.CatalogShape, item string) (types.Type, bool) {
	if shape != front.CatalogSequelizeIndexes {
		return types.Unknown, false
	}
	switch item {
	case "primary", "unique":
		return types.Bool, true
	case "column_indexes":
		return types.ArrayOf(types.Int2), true
	}
	return types.Text, true
}

// sequelizeIndexes answers Sequelize's showIndex: the primary key's index
// and the secondary indexes of the tables the query names, by name.
func (a *catalogAnswer) sequelizeIndexes() []fieldRow {
	var out []fieldRow
	for _, r := range a.s.e.pgRelations() {
		if r.relkind != "r" || !matches(a.name, r.d.Name) {
			continue
		}
		nums := make([]types.Datum, len(r.cols))
		names := make([]string, len(r.cols))
		attnum := map[string]int{}
		for i, c := range r.cols {
			nums[i] = str(strconv.Itoa(i + 1))
			names[i] = c.name
			attnum[c.name] = i + 1
		}
		row := func(name string, primary, unique bool, cols []string, def string) fieldRow {
			keys := make([]string, len(cols))
			for i, c := range cols {
				keys[i] = strconv.Itoa(attnum[c])
			}
			return fieldRow{"name": str(name), "primary": types.NewBool(primary), "unique": types.NewBool(unique),
				"indkey": str(strings.Join(keys, " ")), "column_indexes": str(types.FormatArray(nums)),
				"column_names": textArray(names), "definition": str(def)}
		}
		if len(r.d.PrimaryKey) > 0 {
			out = append(out, row(r.pkName(), true, true, r.d.PrimaryKey, r.indexDef()))
		}
		for _, x := range r.secondaryIndexes() {
			out = append(out, row(x.ix.Name, false, x.ix.Unique, x.columnNames(), x.def()))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i]["name"].S < out[j]["name"].S })
	return out
}
