package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A PostgreSQL source mirrors tables of a PostgreSQL database into
// streamdb tables through logical replication. meta.PGSources creates,
// drops and runs sources; sql binds CREATE and DROP SOURCE (names, the
// objects they touch) and is the sources' host (pg_source_host.go): its
// catalog, secrets and table write path. Mirrored tables are written only
// by their source.

// sysTableSources is the system table of the sources and their appliers
// (meta.PGSources.Rows).
const sysTableSources = "streamdb_sources"

// createPGSource runs CREATE SOURCE ... FROM POSTGRES.
func (e *Engine) createPGSource(ctx context.Context, n *front.CreatePGSource) (string, error) {
	const tag = "CREATE SOURCE"
	if _, exists := e.lookup(n.Name); exists {
		if n.IfNotExists {
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.Name)
	}
	src := &catalog.PGSource{Connection: n.Connection, ConnectionSecret: n.ConnectionSecret, PasswordSecret: n.PasswordSecret,
		SSLCASecret: n.SSLCASecret, SSLCertSecret: n.SSLCertSecret, SSLKeySecret: n.SSLKeySecret,
		Publication: n.Publication, Progress: catalog.ObjectName(n.Name, "", "progress")}
	bound := meta.NewPGSource{Name: n.Name, Source: src, AllTables: n.AllTables}
	for _, t := range n.Tables {
		bound.Tables = append(bound.Tables, meta.NewPGSourceTable{Schema: t.Schema, Name: t.Name, As: t.As})
	}
	if err := e.pgSources.Create(ctx, bound); err != nil {
		return "", err
	}
	return tag, nil
}

// mirrorWriteError refuses a write to a mirrored table by anyone but
// its source.
func mirrorWriteError(d *catalog.Descriptor) error {
	return sqlerr.New(sqlerr.WrongObjectType, "cannot change table %q: it mirrors PostgreSQL source %q", d.Name, d.Mirror).
		WithHint("Change the table in the source database; its changes arrive here.")
}

// pgSourceOf returns the source DROP SOURCE n names, or nil when it
// names none (DROP SOURCE is then DROP STREAM).
func (e *Engine) pgSourceOf(n *front.Drop) *catalog.Descriptor {
	if !n.Source || len(n.Names) != 1 {
		return nil
	}
	if d, ok := e.lookup(n.Names[0]); ok && d.Kind == catalog.KindSource {
		return d
	}
	return nil
}

// dropPGSource drops source d: its applier, its tables (and, with
// cascade, what reads them) and its replication slot. Holding no lock.
func (e *Engine) dropPGSource(ctx context.Context, d *catalog.Descriptor, cascade bool) error {
	if !cascade {
		for _, t := range e.pgSources.Tables(d) {
			if deps := e.dependents(t); len(deps) > 0 {
				return sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop source %s because other objects depend on it", d.Name).
					WithHint("%s %s reads its table %s; use DROP SOURCE ... CASCADE to drop them too.", relKindWord(deps[0]), deps[0].Name, t)
			}
		}
	}
	return e.pgSources.Drop(ctx, d)
}

// sourcesTable is the system table streamdb_sources.
func (e *Engine) sourcesTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableSources, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(meta.PGSourceColumns)}
	return d, e.pgSources.Rows
}
