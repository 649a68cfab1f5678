package pgcatalog

import (
	"sort"
	"strings"

	"streamdb/types"
)

// A SystemTable is one relation of pg_catalog or information_schema,
// computed from the engine on every read, so that ordinary queries work
// on it:
//
//	SELECT relname, relkind FROM pg_catalog.pg_class WHERE relkind = 'm'
//	SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 't'
//
// OID columns are bigint, name columns text.
type SystemTable struct {
	Columns []types.Column
	// Rows computes the rows as r reads them (PostgreSQL hides what a
	// role may not read: information_schema lists only columns of
	// tables it holds a privilege on). Most tables ignore r.
	Rows func(e Engine, r Reader) []types.Row
}

// A Reader is the role a system table's rows are computed for, asked
// when the rows are (so a GRANT or REVOKE reaches prepared statements).
type Reader interface {
	// HoldsAny reports whether the role is a superuser, owns the user
	// relation named relation, or holds one of privs on it.
	HoldsAny(relation string, privs ...string) bool
}

// NoPrivileges reads as a role that holds nothing: reads without a
// session.
type NoPrivileges struct{}

// HoldsAny implements Reader.
func (NoPrivileges) HoldsAny(string, ...string) bool { return false }

// tables are the system tables of this package by qualified name
// ("pg_catalog.pg_class", "information_schema.tables"). They are filled
// by the init functions of the files that compute them and read only
// after.
var tables = map[string]SystemTable{}

// register adds a system table; rows ignores the reader.
func register(name string, columns []types.Column, rows func(e Engine) []types.Row) {
	tables[name] = SystemTable{Columns: columns, Rows: func(e Engine, _ Reader) []types.Row { return rows(e) }}
}

// Qualify is name with its schema: a name without one is in pg_catalog.
func Qualify(name string) string {
	if !strings.Contains(name, ".") {
		return "pg_catalog." + name
	}
	return name
}

// Lookup finds a system table of this package by name, schema-qualified
// or in pg_catalog.
func Lookup(name string) (SystemTable, bool) {
	t, ok := tables[Qualify(name)]
	return t, ok
}

// systemTableNames lists the qualified names of this package's system
// tables and of e's own (Engine.EngineTables), sorted, each with its
// columns.
func systemTableNames(e Engine) ([]string, map[string][]types.Column) {
	all := map[string][]types.Column{}
	for n, t := range tables {
		all[n] = t.Columns
	}
	for n, c := range e.EngineTables() {
		all[n] = c
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, all
}

func cols(spec ...any) []types.Column {
	out := make([]types.Column, 0, len(spec)/2)
	for i := 0; i+1 < len(spec); i += 2 {
		out = append(out, types.Column{Name: spec[i].(string), Type: spec[i+1].(types.Type)})
	}
	return out
}

func b(v bool) types.Datum { return types.NewBool(v) }
