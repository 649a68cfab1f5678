package sql

import (
	"strings"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sql/front"
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
	return e.pgSystemTableFor(name, nil)
}

// pgSystemTableFor is pgSystemTable read by r (nil: a reader holding no
// privilege).
func (e *Engine) pgSystemTableFor(name string, r rowReader) (*catalog.Descriptor, func() []types.Row, bool) {
	if !strings.Contains(name, ".") {
		name = "pg_catalog." + name
	}
	t, ok := pgSystemTables[name]
	if !ok {
		return nil, nil, false
	}
	d := &catalog.Descriptor{Name: name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(t.cols)}
	if t.rowsFor != nil {
		if r == nil {
			r = noPrivileges{}
		}
		return d, func() []types.Row { return t.rowsFor(e, r) }, true
	}
	return d, func() []types.Row { return t.rows(e) }, true
}

type pgSystemTableDef struct {
	cols []types.Column
	rows func(e *Engine) []types.Row
	// rowsFor, when set instead of rows, computes rows that depend on
	// the reader's privileges (PostgreSQL hides what a role may not
	// read: information_schema lists only columns of tables it holds a
	// privilege on).
	rowsFor func(e *Engine, r rowReader) []types.Row
}

// A rowReader is the role a system table's rows are computed for, asked
// when the rows are (so a GRANT or REVOKE reaches prepared statements).
type rowReader interface {
	// holdsAny reports whether the role is a superuser, owns d, or holds
	// one of privs on it (d nil: whether it is a superuser).
	holdsAny(d *catalog.Descriptor, privs ...string) bool
}

// noPrivileges reads as a role that holds nothing: reads without a
// session.
type noPrivileges struct{}

func (noPrivileges) holdsAny(*catalog.Descriptor, ...string) bool { return false }

func (s *session) holdsAny(d *catalog.Descriptor, privs ...string) bool {
	if s.roleSuperuser() {
		return true
	}
	if d == nil {
		return false
	}
	if s.e.roles.Owner(d) == s.user {
		return true
	}
	for _, p := range privs {
		if s.e.roles.Granted(d, s.user, p) {
			return true
		}
	}
	return false
}

// sessionCatalog is the catalog as a session's statements bind against
// it: system tables computed for the session's role.
type sessionCatalog struct {
	*Engine
	s *session
}

func (c sessionCatalog) systemTable(name string) (*catalog.Descriptor, func() []types.Row, bool) {
	return c.Engine.systemTableFor(name, c.s)
}

// bindQuery binds a SELECT of the session.
func (s *session) bindQuery(st *front.Statement, params *boundParams) (plan.Node, error) {
	return s.e.bindQueryIn(sessionCatalog{Engine: s.e, s: s}, st, params)
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
