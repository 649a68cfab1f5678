package sql

import (
	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/plan"
	"streamdb/types"
)

// The hook where a relation's name resolves to a system table of
// pg_catalog or information_schema: package pgcatalog's (pgcatalog.Lookup)
// or the engine's own streamdb_* tables (pgSystemTables), their rows
// computed on every read. pg_catalog tables answer with or without the
// pg_catalog. prefix; information_schema tables need theirs.

// pgSystemTable returns the pg_catalog or information_schema table name
// ("pg_catalog.pg_class", "pg_class", "information_schema.tables").
func (e *Engine) pgSystemTable(name string) (*catalog.Descriptor, func() []types.Row, bool) {
	return e.pgSystemTableFor(name, nil)
}

// pgSystemTableFor is pgSystemTable read by r (nil: a reader holding no
// privilege).
func (e *Engine) pgSystemTableFor(name string, r rowReader) (*catalog.Descriptor, func() []types.Row, bool) {
	name = pgcatalog.Qualify(name)
	if r == nil {
		r = noPrivileges{}
	}
	if t, ok := pgcatalog.Lookup(name); ok {
		d := &catalog.Descriptor{Name: name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(t.Columns)}
		return d, func() []types.Row { return t.Rows(catalogEngine{e}, catalogRole{e, r}) }, true
	}
	t, ok := pgSystemTables[name]
	if !ok {
		return nil, nil, false
	}
	d := &catalog.Descriptor{Name: name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(t.cols)}
	if t.rowsFor != nil {
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
	return s.sessionRole().holdsAny(d, privs...)
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
func (s *session) bindQuery(st *front.Statement, params *binder.Params) (plan.Node, error) {
	return bindQueryIn(sessionCatalog{Engine: s.e, s: s}, st, params)
}

func intD(i int64) types.Datum { return types.NewInt(i) }

// pgSystemTables are the system tables the engine computes itself
// (streamdb_streams, streamdb_view_errors), by qualified name; the
// others are package pgcatalog's.
var pgSystemTables = map[string]pgSystemTableDef{}
