package sql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/pgcdc"
	"streamdb/pgwire"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A PostgreSQL source mirrors tables of a PostgreSQL database into
// streamdb tables through logical replication (package pgcdc). At
// CREATE SOURCE a replication slot is created and the tables are copied
// as of its snapshot, in chunks (pg_source_copy.go); from then on an
// applier (one goroutine per source, pg_source_apply.go) applies each source
// transaction whole. Every commit of the applier also writes the source
// position it reaches into the source's progress table, so the position
// and the changes land together: after a crash the applier starts from
// the position its tables hold, and only then confirms that position to
// the slot. Mirrored tables are written only by their source.

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
		Publication: n.Publication, Progress: n.Name + "_progress"}
	ep, err := e.sourceEndpoint(src)
	if err != nil {
		return "", err
	}
	names := make([][2]string, 0, len(n.Tables))
	if n.AllTables {
		all, err := pgcdc.PublicationTables(ctx, ep, n.Publication)
		if err != nil {
			return "", sourceError(err)
		}
		if len(all) == 0 {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "publication %q has no tables", n.Publication)
		}
		names = all
	}
	as := map[[2]string]string{}
	for _, t := range n.Tables {
		schema := t.Schema
		if schema == "" {
			schema = "public"
		}
		names = append(names, [2]string{schema, t.Name})
		as[[2]string{schema, t.Name}] = t.As
	}
	tables, err := pgcdc.DescribeTables(ctx, ep, n.Publication, names)
	if err != nil {
		return "", sourceError(err)
	}
	taken := map[string]bool{n.Name: true, src.Progress: true}
	var ddl []string
	var asText []string
	for _, t := range tables {
		name := as[[2]string{t.Schema, t.Name}]
		if name == "" {
			name = t.Name
		}
		if len(t.Key) == 0 {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "source table %s has no primary key", t.QualifiedName()).
				WithHint("Add one on the source (ALTER TABLE %s ADD PRIMARY KEY (...)): a mirrored table is kept by key.", t.QualifiedName())
		}
		if taken[name] {
			return "", sqlerr.New(sqlerr.DuplicateTable, "two objects of source %q would be named %q", n.Name, name).
				WithHint("Name the mirrored tables apart with FOR TABLES (schema.table AS name, ...).")
		}
		taken[name] = true
		stmt, text := mirrorTableDDL(name, t)
		ddl = append(ddl, stmt)
		asText = append(asText, text...)
		src.Tables = append(src.Tables, catalog.PGSourceTable{Schema: t.Schema, Name: t.Name, Table: name})
	}
	for name := range taken {
		if _, exists := e.lookup(name); exists {
			return "", sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name).
				WithHint("Name the mirrored tables apart with FOR TABLES (schema.table AS name, ...).")
		}
	}
	ddl = append(ddl, fmt.Sprintf("CREATE TABLE %s (source text PRIMARY KEY, lsn text NOT NULL, applied_at timestamptz NOT NULL)", quoteIdent(src.Progress)))
	if len(asText) > 0 {
		pgwire.Notice(ctx, "streamdb has no type for "+strings.Join(asText, ", ")+": mirrored as text", "")
	}

	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	src.Slot = "streamdb_" + strings.ToLower(n.Name) + "_" + hex.EncodeToString(suffix)
	if len(src.Slot) > 63 || !validSlotName(src.Slot) {
		src.Slot = "streamdb_source_" + hex.EncodeToString(suffix)
	}

	var created []string
	undo := func(err error) (string, error) {
		for i := len(created) - 1; i >= 0; i-- {
			if _, derr := e.drop(context.WithoutCancel(ctx), &front.Drop{Kind: front.KindTable, Names: []string{created[i]}, Schemas: []string{""}, IfExists: true, Cascade: true}); derr != nil {
				e.log.Warn("CREATE SOURCE failed; dropping a table it made failed too", "table", created[i], "err", derr)
			}
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := pgcdc.DropSlot(dctx, ep, src.Slot); derr != nil {
			e.log.Warn("CREATE SOURCE failed; dropping its replication slot failed too", "slot", src.Slot, "err", derr)
		}
		return "", err
	}
	for _, stmt := range ddl {
		st, err := front.Parse(stmt)
		if err != nil {
			return undo(sqlerr.New(sqlerr.InternalError, "mirroring a source table: %v", err))
		}
		cs := st.Node.(*front.CreateSource)
		if _, err := e.createSourceFor(ctx, cs, n.Name); err != nil {
			return undo(err)
		}
		created = append(created, cs.Name)
	}
	slot, err := pgcdc.CreateSlot(ctx, ep, src.Slot)
	if err != nil {
		return undo(sourceError(err))
	}
	a := &pgApplier{e: e, name: n.Name, src: src}
	err = a.copySnapshot(ctx, slot, tables, false)
	slot.Close(context.WithoutCancel(ctx))
	if err != nil {
		return undo(err)
	}
	d := &catalog.Descriptor{Name: n.Name, Kind: catalog.KindSource, CreatedAt: time.Now().UTC(), Source: src}
	stored, err := e.ddl.CreateLocked(ctx, d, func() error {
		if _, exists := e.lookup(n.Name); exists {
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.Name)
		}
		return nil
	})
	if !stored {
		return undo(err)
	}
	e.pgSources.start(e, d)
	e.log.Info("created source", "source", n.Name, "publication", n.Publication, "slot", src.Slot, "tables", len(src.Tables))
	return tag, err
}

// dropUnfinishedSources drops the tables of a CREATE SOURCE that did not
// finish (the server stopped during its copy): they name a source the
// catalog does not hold, as the source is stored last. CREATE SOURCE is
// all or nothing, as DDL is in PostgreSQL, so after a restart it is as if
// it never ran and the same CREATE SOURCE can run again. Its replication
// slot stays on the source database: its connection was stored nowhere.
// Called at open, before any session can start a CREATE SOURCE.
func (e *Engine) dropUnfinishedSources(ctx context.Context) {
	sources := map[string]bool{}
	for _, d := range e.objects(catalog.KindSource) {
		sources[d.Name] = true
	}
	warned := map[string]bool{}
	for _, d := range e.objects(catalog.KindTable) {
		if d.Mirror == "" || sources[d.Mirror] {
			continue
		}
		if !warned[d.Mirror] {
			warned[d.Mirror] = true
			e.log.Warn("CREATE SOURCE did not finish before the server stopped; dropping the tables it made. "+
				"Its replication slot may remain on the source database: drop it there with pg_drop_replication_slot",
				"source", d.Mirror, "slot", "streamdb_"+strings.ToLower(d.Mirror)+"_*")
		}
		if _, err := e.drop(ctx, &front.Drop{Kind: front.KindTable, Names: []string{d.Name}, Schemas: []string{""}, IfExists: true, Cascade: true, Source: true}); err != nil {
			e.log.Warn("dropping a table of an unfinished CREATE SOURCE failed", "table", d.Name, "source", d.Mirror, "err", err)
		}
	}
}

// mirrorTableDDL is the CREATE TABLE of table t's mirror, and the
// columns whose type streamdb does not have (mirrored as text).
func mirrorTableDDL(name string, t *pgcdc.Table) (string, []string) {
	var cols, asText []string
	for _, c := range t.Columns {
		typ := mirrorColumnType(c.Type)
		if typ != c.Type {
			asText = append(asText, fmt.Sprintf("%s.%s (%s)", t.QualifiedName(), quoteIdent(c.Name), c.Type))
		}
		col := quoteIdent(c.Name) + " " + typ
		if c.NotNull {
			col += " NOT NULL"
		}
		cols = append(cols, col)
	}
	key := make([]string, len(t.Key))
	for i, k := range t.Key {
		key[i] = quoteIdent(t.Columns[k].Name)
	}
	cols = append(cols, "PRIMARY KEY ("+strings.Join(key, ", ")+")")
	return fmt.Sprintf("CREATE TABLE %s (%s)", quoteIdent(name), strings.Join(cols, ", ")), asText
}

func validSlotName(s string) bool {
	for _, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// sourceError is an error of the source database as a SQL error: the
// source's own SQLSTATE class 08 (connection) stays a connection error.
// A server certificate that fails the check is a connection failure too
// (08006, what libpq's users see as "certificate verify failed").
func sourceError(err error) error {
	if _, ok := err.(*sqlerr.Error); ok {
		return err
	}
	if pgcdc.CertificateRejected(err) {
		return sqlerr.New(sqlerr.ConnectionFailure, "PostgreSQL source: the source's server certificate failed the check: %v", err).
			WithHint("SSL CERTIFICATE AUTHORITY SECRET must hold the CA that signed the source's certificate; with sslmode=verify-full the certificate must also name the host the connection string gives.")
	}
	return sqlerr.New(sqlerr.ConnectionFailure, "PostgreSQL source: %v", err)
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
	var tables []string
	for _, t := range d.Source.Tables {
		tables = append(tables, t.Table)
	}
	tables = append(tables, d.Source.Progress)
	if !cascade {
		for _, t := range tables {
			if deps := e.dependents(t); len(deps) > 0 {
				return sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop source %s because other objects depend on it", d.Name).
					WithHint("%s %s reads its table %s; use DROP SOURCE ... CASCADE to drop them too.", relKindWord(deps[0]), deps[0].Name, t)
			}
		}
	}
	e.pgSources.stop(d.Name)
	if err := e.ddl.DropLocked(d); err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := e.drop(ctx, &front.Drop{Kind: front.KindTable, Names: []string{t}, Schemas: []string{""}, IfExists: true, Cascade: true, Source: true}); err != nil {
			return err
		}
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	ep, err := e.sourceEndpoint(d.Source)
	if err == nil {
		err = pgcdc.DropSlot(dctx, ep, d.Source.Slot)
	}
	if err != nil {
		pgwire.Notice(ctx, fmt.Sprintf("could not drop replication slot %q on the source: %v", d.Source.Slot, err),
			fmt.Sprintf("Drop it there with SELECT pg_drop_replication_slot('%s'); until then the source keeps its WAL.", d.Source.Slot))
	}
	return nil
}

// sourceRowChanges turns source rows (text values in the table's column
// order) into insertions.
func sourceRows(cols []types.Column, rows [][][]byte) ([]exec.Change, error) {
	out := make([]exec.Change, 0, len(rows))
	for _, vals := range rows {
		row := make(types.Row, len(cols))
		for i, v := range vals {
			d, err := sourceDatum(v, v == nil, cols[i])
			if err != nil {
				return nil, err
			}
			row[i] = d
		}
		out = append(out, exec.Change{Row: row, Sign: exec.Insert})
	}
	return out, nil
}

// sourceDatum reads one source value (PostgreSQL's text output).
func sourceDatum(text []byte, null bool, col types.Column) (types.Datum, error) {
	if null {
		return types.Null, nil
	}
	d, err := types.ParseText(string(text), col.Type)
	if err != nil {
		return types.Null, fmt.Errorf("column %s: %w", col.Name, err)
	}
	return d, nil
}
