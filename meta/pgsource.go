package meta

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/pgcdc"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A PostgreSQL source mirrors tables of a PostgreSQL database into
// streamdb tables through logical replication (package pgcdc). At
// CREATE SOURCE a replication slot is created and the tables are copied
// as of its snapshot, in chunks (pgsource_copy.go); from then on an
// applier (one goroutine per source, pgsource_apply.go) applies each source
// transaction whole. Every commit of the applier also writes the source
// position it reaches into the source's progress table, so the position
// and the changes land together: after a crash the applier starts from
// the position its tables hold, and only then confirms that position to
// the slot. Mirrored tables are written only by their source.

// NewPGSource is a CREATE SOURCE ... FROM POSTGRES that sql has bound:
// the source's name (checked free), its descriptor so far (connection,
// secrets, publication and progress table; Create fills in the slot and
// the tables) and the tables it names.
type NewPGSource struct {
	Name   string
	Source *catalog.PGSource
	// AllTables mirrors every table of the publication, and Tables
	// those named (Schema "" is public), each as its As or its own name.
	AllTables bool
	Tables    []NewPGSourceTable
}

// NewPGSourceTable is a source table FOR TABLES names.
type NewPGSourceTable struct{ Schema, Name, As string }

// Create creates source n: its mirrored tables and its progress table,
// its replication slot, the copy of the tables as of the slot's
// snapshot, and last the source's descriptor (so a crash before it
// leaves tables DropUnfinished removes); then starts its applier. It is
// all or nothing: on a failure it drops what it made. It takes ddlMu
// itself, for each table and for the descriptor, and not across the
// copy.
func (s *PGSources) Create(ctx context.Context, n NewPGSource) error {
	host := s.cfg.Host
	src := n.Source
	ep, err := host.Endpoint(src)
	if err != nil {
		return err
	}
	names := make([][2]string, 0, len(n.Tables))
	if n.AllTables {
		all, err := pgcdc.PublicationTables(ctx, ep, src.Publication)
		if err != nil {
			return sourceError(err)
		}
		if len(all) == 0 {
			return sqlerr.New(sqlerr.InvalidParameterValue, "publication %q has no tables", src.Publication)
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
	tables, err := pgcdc.DescribeTables(ctx, ep, src.Publication, names)
	if err != nil {
		return sourceError(err)
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
			return sqlerr.New(sqlerr.FeatureNotSupported, "source table %s has no primary key", t.QualifiedName()).
				WithHint("Add one on the source (ALTER TABLE %s ADD PRIMARY KEY (...)): a mirrored table is kept by key.", t.QualifiedName())
		}
		if taken[name] {
			return sqlerr.New(sqlerr.DuplicateTable, "two objects of source %q would be named %q", n.Name, name).
				WithHint("Name the mirrored tables apart with FOR TABLES (schema.table AS name, ...).")
		}
		taken[name] = true
		stmt, text := mirrorTableDDL(name, t)
		ddl = append(ddl, stmt)
		asText = append(asText, text...)
		src.Tables = append(src.Tables, catalog.PGSourceTable{Schema: t.Schema, Name: t.Name, Table: name})
	}
	for name := range taken {
		if _, exists := host.Lookup(name); exists {
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name).
				WithHint("Name the mirrored tables apart with FOR TABLES (schema.table AS name, ...).")
		}
	}
	ddl = append(ddl, progressTableDDL(src.Progress))
	if len(asText) > 0 {
		host.Notice(ctx, "streamdb has no type for "+strings.Join(asText, ", ")+": mirrored as text", "")
	}
	src.Slot = slotName(n.Name)

	var created []string
	undo := func(err error) error {
		for i := len(created) - 1; i >= 0; i-- {
			if derr := host.DropMirror(context.WithoutCancel(ctx), created[i]); derr != nil {
				s.cfg.Log.Warn("CREATE SOURCE failed; dropping a table it made failed too", "table", created[i], "err", derr)
			}
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := pgcdc.DropSlot(dctx, ep, src.Slot); derr != nil {
			s.cfg.Log.Warn("CREATE SOURCE failed; dropping its replication slot failed too", "slot", src.Slot, "err", derr)
		}
		return err
	}
	for _, stmt := range ddl {
		name, err := host.CreateMirror(ctx, stmt, n.Name)
		if err != nil {
			return undo(err)
		}
		created = append(created, name)
	}
	slot, err := pgcdc.CreateSlot(ctx, ep, src.Slot)
	if err != nil {
		return undo(sourceError(err))
	}
	a := &pgApplier{s: s, name: n.Name, src: src}
	err = a.copySnapshot(ctx, slot, tables, false)
	slot.Close(context.WithoutCancel(ctx))
	if err != nil {
		return undo(err)
	}
	d := &catalog.Descriptor{Name: n.Name, Kind: catalog.KindSource, CreatedAt: time.Now().UTC(), Source: src}
	stored, err := s.cfg.DDL.CreateLocked(ctx, d, func() error {
		if _, exists := host.Lookup(n.Name); exists {
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.Name)
		}
		return nil
	})
	if !stored {
		return undo(err)
	}
	s.start(d)
	s.cfg.Log.Info("created source", "source", n.Name, "publication", src.Publication, "slot", src.Slot, "tables", len(src.Tables))
	return err
}

// progressTableDDL is the CREATE TABLE of a source's progress table:
// the source position its tables hold, and pending fills
// (pgsource_fill.go).
func progressTableDDL(name string) string {
	return fmt.Sprintf("CREATE TABLE %s (source text PRIMARY KEY, lsn text NOT NULL, applied_at timestamptz NOT NULL)", expr.QuoteIdent(name))
}

// slotName is a new replication slot's name for source name: the name
// with a random suffix, or a generic one when the name does not make a
// valid slot name.
func slotName(name string) string {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	slot := "streamdb_" + strings.ToLower(name) + "_" + hex.EncodeToString(suffix)
	if len(slot) > 63 || !validSlotName(slot) {
		slot = "streamdb_source_" + hex.EncodeToString(suffix)
	}
	return slot
}

// DropUnfinished drops the tables of a CREATE SOURCE that did not
// finish (the server stopped during its copy): they name a source the
// catalog does not hold, as the source is stored last. CREATE SOURCE is
// all or nothing, as DDL is in PostgreSQL, so after a restart it is as if
// it never ran and the same CREATE SOURCE can run again. Its replication
// slot stays on the source database: its connection was stored nowhere.
// Called at open, before any session can start a CREATE SOURCE.
func (s *PGSources) DropUnfinished(ctx context.Context) {
	host := s.cfg.Host
	sources := map[string]bool{}
	for _, d := range host.Objects(catalog.KindSource) {
		sources[d.Name] = true
	}
	warned := map[string]bool{}
	for _, d := range host.Objects(catalog.KindTable) {
		if d.Mirror == "" || sources[d.Mirror] {
			continue
		}
		if !warned[d.Mirror] {
			warned[d.Mirror] = true
			s.cfg.Log.Warn("CREATE SOURCE did not finish before the server stopped; dropping the tables it made. "+
				"Its replication slot may remain on the source database: drop it there with pg_drop_replication_slot",
				"source", d.Mirror, "slot", "streamdb_"+strings.ToLower(d.Mirror)+"_*")
		}
		if err := host.DropMirror(ctx, d.Name); err != nil {
			s.cfg.Log.Warn("dropping a table of an unfinished CREATE SOURCE failed", "table", d.Name, "source", d.Mirror, "err", err)
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
			asText = append(asText, fmt.Sprintf("%s.%s (%s)", t.QualifiedName(), expr.QuoteIdent(c.Name), c.Type))
		}
		col := expr.QuoteIdent(c.Name) + " " + typ
		if c.NotNull {
			col += " NOT NULL"
		}
		cols = append(cols, col)
	}
	key := make([]string, len(t.Key))
	for i, k := range t.Key {
		key[i] = expr.QuoteIdent(t.Columns[k].Name)
	}
	cols = append(cols, "PRIMARY KEY ("+strings.Join(key, ", ")+")")
	return fmt.Sprintf("CREATE TABLE %s (%s)", expr.QuoteIdent(name), strings.Join(cols, ", ")), asText
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

// Tables returns the tables source d made: its mirrored tables and its
// progress table.
func (s *PGSources) Tables(d *catalog.Descriptor) []string {
	var tables []string
	for _, t := range d.Source.Tables {
		tables = append(tables, t.Table)
	}
	return append(tables, d.Source.Progress)
}

// Drop drops source d: its applier, its descriptor, its tables (with
// what reads them: sql has checked that CASCADE allows it) and its
// replication slot; a slot it cannot drop is a notice, not an error, as
// the source is gone here. Called holding no lock.
func (s *PGSources) Drop(ctx context.Context, d *catalog.Descriptor) error {
	s.stop(d.Name)
	if err := s.cfg.DDL.DropLocked(d); err != nil {
		return err
	}
	for _, t := range s.Tables(d) {
		if err := s.cfg.Host.DropMirror(ctx, t); err != nil {
			return err
		}
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	ep, err := s.cfg.Host.Endpoint(d.Source)
	if err == nil {
		err = pgcdc.DropSlot(dctx, ep, d.Source.Slot)
	}
	if err != nil {
		s.cfg.Host.Notice(ctx, fmt.Sprintf("could not drop replication slot %q on the source: %v", d.Source.Slot, err),
			fmt.Sprintf("Drop it there with SELECT pg_drop_replication_slot('%s'); until then the source keeps its WAL.", d.Source.Slot))
	}
	return nil
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
