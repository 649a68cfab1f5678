package sql

import (
	"strings"

	"streamdb/storage"
	"streamdb/types"
)

// System tables of pg_catalog and information_schema, computed from the
// catalog on every read, so that ordinary queries work on them:
//
//	SELECT relname, relkind FROM pg_catalog.pg_class WHERE relkind = 'm'
//	SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 't'
//
// pg_catalog tables answer with or without the pg_catalog. prefix;
// information_schema tables need theirs. They describe the user relations
// (streams, tables, materialized views; see pgcatalog.go); oid columns are
// bigint. streamdb has no roles: owner columns say 10, PostgreSQL's bootstrap
// superuser.

// pgSystemTable returns the pg_catalog or information_schema table name
// ("pg_catalog.pg_class", "pg_class", "information_schema.tables").
func (e *Engine) pgSystemTable(name string) (*storage.Descriptor, func() []types.Row, bool) {
	if !strings.Contains(name, ".") {
		name = "pg_catalog." + name
	}
	t, ok := pgSystemTables[name]
	if !ok {
		return nil, nil, false
	}
	d := &storage.Descriptor{Name: name, Kind: storage.KindSystem, Columns: storage.ColumnsFrom(t.cols)}
	return d, func() []types.Row { return t.rows(e) }, true
}

type pgSystemTableDef struct {
	cols []types.Column
	rows func(e *Engine) []types.Row
}

func cols(spec ...any) []types.Column {
	out := make([]types.Column, 0, len(spec)/2)
	for i := 0; i+1 < len(spec); i += 2 {
		out = append(out, types.Column{Name: spec[i].(string), Type: spec[i+1].(types.Type)})
	}
	return out
}

func intD(i int64) types.Datum { return types.NewInt(i) }

var pgSystemTables = map[string]pgSystemTableDef{
	"pg_catalog.pg_namespace": {
		cols: cols("oid", types.Int8, "nspname", types.Text, "nspowner", types.Int8),
		rows: func(*Engine) []types.Row {
			return []types.Row{
				{intD(oidPgCatalog), str("pg_catalog"), intD(10)},
				{intD(oidPublic), str("public"), intD(10)},
				{intD(oidInfoSchema), str("information_schema"), intD(10)},
			}
		},
	},
	"pg_catalog.pg_class": {
		cols: cols("oid", types.Int8, "relname", types.Text, "relnamespace", types.Int8, "relkind", types.Text,
			"relowner", types.Int8, "relam", types.Int8, "relhasindex", types.Bool, "relpersistence", types.Text,
			"relnatts", types.Int2, "relispartition", types.Bool),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				rows = append(rows, types.Row{intD(int64(r.oid)), str(r.d.Name), intD(oidPublic), str(r.relkind),
					intD(10), intD(2), types.NewBool(len(r.d.PrimaryKey) > 0), str("p"),
					intD(int64(len(r.cols))), types.NewBool(false)})
				if len(r.d.PrimaryKey) > 0 {
					rows = append(rows, types.Row{intD(int64(r.oid) + pkOIDBase), str(r.pkName()), intD(oidPublic), str("i"),
						intD(10), intD(403), types.NewBool(false), str("p"),
						intD(int64(len(r.d.PrimaryKey))), types.NewBool(false)})
				}
			}
			return rows
		},
	},
	"pg_catalog.pg_attribute": {
		cols: cols("attrelid", types.Int8, "attname", types.Text, "atttypid", types.Int8, "attnum", types.Int2,
			"atttypmod", types.Int4, "attnotnull", types.Bool, "attisdropped", types.Bool, "atthasdef", types.Bool,
			"attstorage", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				for i, c := range r.cols {
					rows = append(rows, types.Row{intD(int64(r.oid)), str(c.name), intD(int64(c.typ.OID())), intD(int64(i + 1)),
						intD(c.atttypmod()), types.NewBool(c.notNull), types.NewBool(false), types.NewBool(false),
						str(attstorageCode(c.typ))})
				}
			}
			return rows
		},
	},
	"pg_catalog.pg_type": {
		cols: cols("oid", types.Int8, "typname", types.Text, "typnamespace", types.Int8, "typlen", types.Int2, "typtype", types.Text),
		rows: func(*Engine) []types.Row {
			var rows []types.Row
			for _, t := range pgTypes {
				rows = append(rows, types.Row{intD(int64(t.OID())), str(typname(t)), intD(oidPgCatalog), intD(typlen(t)), str("b")})
			}
			return rows
		},
	},
	"pg_catalog.pg_index": {
		cols: cols("indexrelid", types.Int8, "indrelid", types.Int8, "indnatts", types.Int2, "indisunique", types.Bool,
			"indisprimary", types.Bool, "indkey", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				if len(r.d.PrimaryKey) == 0 {
					continue
				}
				rows = append(rows, types.Row{intD(int64(r.oid) + pkOIDBase), intD(int64(r.oid)), intD(int64(len(r.d.PrimaryKey))),
					types.NewBool(true), types.NewBool(true), str(r.indkey())})
			}
			return rows
		},
	},
	"information_schema.tables":  infoSchemaTables,
	"information_schema.columns": infoSchemaColumns,
}
