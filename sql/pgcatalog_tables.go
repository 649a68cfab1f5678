package sql

import (
	"strings"

	"streamdb/catalog"
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
func (e *Engine) pgSystemTable(name string) (*catalog.Descriptor, func() []types.Row, bool) {
	if !strings.Contains(name, ".") {
		name = "pg_catalog." + name
	}
	t, ok := pgSystemTables[name]
	if !ok {
		return nil, nil, false
	}
	d := &catalog.Descriptor{Name: name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(t.cols)}
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
	"information_schema.tables":  infoSchemaTables,
	"information_schema.columns": infoSchemaColumns,
}
