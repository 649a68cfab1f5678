package meta

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/pgcdc"
	"streamdb/types"
)

// PGSourceHost is what the PostgreSQL sources ask of the frontend (sql
// implements it): the live catalog, the secrets a connection is made
// from, and the table write path, through which a source's tables are
// created, changed and written as any table is, by the source as their
// only writer. Its methods take the locks they need (ddlMu for the DDL
// ones); callers hold none.
type PGSourceHost interface {
	// Lookup and Objects read the live catalog.
	Lookup(name string) (*catalog.Descriptor, bool)
	Objects(kind catalog.ObjectKind) []*catalog.Descriptor
	// Endpoint is how to reach src from its secrets as they are now;
	// ShownConnection is its connection string as SHOW SOURCES shows
	// it (no password).
	Endpoint(src *catalog.PGSource) (pgcdc.Endpoint, error)
	ShownConnection(src *catalog.PGSource) string
	// CreateMirror runs stmt, a CREATE TABLE, making a table that
	// source mirrors, and returns its name.
	CreateMirror(ctx context.Context, stmt, source string) (string, error)
	// AlterMirror runs stmt, an ALTER TABLE of a mirrored table, as its
	// source.
	AlterMirror(ctx context.Context, stmt string) error
	// DropMirror drops table name, if it exists, with what reads it, as
	// its source.
	DropMirror(ctx context.Context, name string) error
	// CommitMirror commits writes in one commit, as the source: acknowledged only once
	// JetStream holds them.
	CommitMirror(ctx context.Context, writes []*MirrorWrite) error
	// Query runs query, a SELECT of a progress table, reading what was
	// committed before it, and returns its rows as text.
	Query(ctx context.Context, query string) ([][]string, error)
	// WaitTableCurrent waits until table d's pipeline has applied every
	// commit made to it, reporting its progress as what while it takes
	// long.
	WaitTableCurrent(ctx context.Context, d *catalog.Descriptor, what string) error
	// ChangelogLimit is the size of one table changelog message, in
	// bytes.
	ChangelogLimit() int
	// Notice sends the client of ctx's statement a notice (none when
	// there is no client).
	Notice(ctx context.Context, msg, hint string)
}

// MirrorWrite is one table's part of a source commit: Compute returns
// the changes, from the table's state under its lock.
type MirrorWrite struct {
	Table   *catalog.Descriptor
	Compute func(ctx context.Context, t MirrorTable) ([]exec.Change, error)
}

// MirrorTable is a table's committed state as a source commit reads it
// (with its primary key).
type MirrorTable interface {
	Name() string
	Columns() []types.Column
	// RowKey is row's identity in the table (its primary key, encoded).
	RowKey(row types.Row) []byte
	// Lookup returns the row under key, or nil.
	Lookup(key []byte) (types.Row, error)
	// Rows returns every row.
	Rows(ctx context.Context) ([]types.Row, error)
}

// PGSourcesConfig is what the sources work on.
type PGSourcesConfig struct {
	Host PGSourceHost
	// DDL stores and drops the sources' descriptors.
	DDL *DDL
	Log *slog.Logger
}

// PGSources is one server's PostgreSQL sources: CREATE and DROP SOURCE
// once sql has bound them (pgsource.go), and the running appliers, by
// source name.
type PGSources struct {
	cfg     PGSourcesConfig
	mu      sync.Mutex
	running map[string]*pgApplier
}

// NewPGSources returns the sources over cfg, none running.
func NewPGSources(cfg PGSourcesConfig) *PGSources { return &PGSources{cfg: cfg} }

// start starts the applier of source d (replacing one that runs).
func (s *PGSources) start(d *catalog.Descriptor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.running = map[string]*pgApplier{}
	}
	if old := s.running[d.Name]; old != nil {
		old.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &pgApplier{s: s, name: d.Name, src: d.Source, cancel: cancel, done: make(chan struct{}), status: "starting"}
	s.running[d.Name] = a
	go a.run(ctx)
}

// stop stops the applier of source name and waits for it.
func (s *PGSources) stop(name string) {
	s.mu.Lock()
	a := s.running[name]
	delete(s.running, name)
	s.mu.Unlock()
	if a != nil {
		a.cancel()
		<-a.done
	}
}

// StopAll stops every applier and waits for them.
func (s *PGSources) StopAll() {
	s.mu.Lock()
	all := s.running
	s.running = nil
	s.mu.Unlock()
	for _, a := range all {
		a.cancel()
	}
	for _, a := range all {
		<-a.done
	}
}

// StartAll starts an applier for every source of the catalog.
func (s *PGSources) StartAll() {
	for _, d := range s.cfg.Host.Objects(catalog.KindSource) {
		s.start(d)
	}
}

// get returns the applier of source name, or nil.
func (s *PGSources) get(name string) *pgApplier {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[name]
}

// quoteLiteral is s as a SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
