package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgcdc"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// pgSourceHost is the engine as the PostgreSQL sources' host
// (meta.PGSourceHost): their tables are made, altered, dropped and
// written through the statements and the table write path every table
// uses, by a session that may write mirrored tables.
type pgSourceHost struct{ e *Engine }

var _ meta.PGSourceHost = pgSourceHost{}

func (h pgSourceHost) Lookup(name string) (*catalog.Descriptor, bool) { return h.e.lookup(name) }

func (h pgSourceHost) Objects(kind catalog.ObjectKind) []*catalog.Descriptor {
	return h.e.objects(kind)
}

func (h pgSourceHost) Endpoint(src *catalog.PGSource) (pgcdc.Endpoint, error) {
	return h.e.sourceEndpoint(src)
}

func (h pgSourceHost) ShownConnection(src *catalog.PGSource) string {
	return sourceConnectionText(src)
}

func (h pgSourceHost) CreateMirror(ctx context.Context, stmt, source string) (string, error) {
	st, err := front.Parse(stmt)
	if err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "mirroring a source table: %v", err)
	}
	cs, ok := st.Node.(*front.CreateSource)
	if !ok {
		return "", sqlerr.New(sqlerr.InternalError, "mirroring a source table: %s is not a CREATE TABLE", stmt)
	}
	_, err = h.e.createSourceFor(ctx, cs, source)
	return cs.Name, err
}

func (h pgSourceHost) AlterMirror(ctx context.Context, stmt string) error {
	st, err := front.Parse(stmt)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "following a source's column change: %v", err)
	}
	n, ok := st.Node.(*front.AlterTable)
	if !ok {
		return sqlerr.New(sqlerr.InternalError, "following a source's column change: %s is not an ALTER TABLE", stmt)
	}
	_, err = h.mirrorSession().alterTable(ctx, n)
	return err
}

func (h pgSourceHost) DropMirror(ctx context.Context, name string) error {
	_, err := h.e.drop(ctx, &front.Drop{Kind: front.KindTable, Names: []string{name}, Schemas: []string{""}, IfExists: true, Cascade: true, Source: true})
	return err
}

func (h pgSourceHost) CommitMirror(ctx context.Context, writes []*meta.MirrorWrite) error {
	tw := make([]*tableWrite, len(writes))
	for i, w := range writes {
		compute := w.Compute
		tw[i] = &tableWrite{d: w.Table, compute: func(ctx context.Context, ts *tableState) ([]exec.Change, error) {
			return compute(ctx, mirrorTable{ts})
		}}
	}
	return h.mirrorSession().commitWrites(ctx, tw, nil)
}

func (h pgSourceHost) Query(ctx context.Context, query string) ([][]string, error) {
	res, err := h.e.consoleRun(ctx, BootstrapUser, query, 0)
	if err != nil {
		return nil, err
	}
	return res.Rows, nil
}

func (h pgSourceHost) WaitTableCurrent(ctx context.Context, d *catalog.Descriptor, what string) error {
	return h.e.waitTableCurrent(ctx, d, what)
}

func (h pgSourceHost) ChangelogLimit() int { return h.e.tables.ChangelogLimit() }

func (h pgSourceHost) Notice(ctx context.Context, msg, hint string) { pgwire.Notice(ctx, msg, hint) }

// mirrorSession is the session a source writes through: the only one
// that may write mirrored tables.
func (h pgSourceHost) mirrorSession() *session { return &session{e: h.e, mirrorWriter: true} }

// mirrorTable is a table's state as a source commit reads it.
type mirrorTable struct{ ts *tableState }

func (m mirrorTable) Name() string                                  { return m.ts.d.Name }
func (m mirrorTable) Columns() []types.Column                       { return m.ts.cols }
func (m mirrorTable) RowKey(row types.Row) []byte                   { return rowKey(m.ts.key, row) }
func (m mirrorTable) Lookup(key []byte) (types.Row, error)          { return m.ts.Lookup(key) }
func (m mirrorTable) Rows(ctx context.Context) ([]types.Row, error) { return m.ts.Rows(ctx) }
