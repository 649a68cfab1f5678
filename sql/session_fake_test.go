package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/types"
)

// fakeEngine is an Engine with no server: its catalog is stored through
// meta.Catalog in the fake node's Pebble (the catalog command fills it
// as OfflineCatalog binds, with a table's constraints as CREATE TABLE
// records them), meta's role store is kept in memory, and the node is
// one of fakes (session_fake_node_test.go, session_fake_ddl_test.go): a
// Pebble store in memory, a runtime whose dataflows never get input, a
// JetStream that applies a table's commits to its state at once, a node
// that counts DDL checkpoints and a coordinator that retains no point.
// Sessions over it parse, bind, check privileges and run settings,
// transaction blocks, prepared statements, cursors, GRANT and REVOKE,
// ad-hoc reads of tables, INSERT, UPDATE, DELETE, COPY, COMMIT, and DDL
// of tables, streams, plain views, sequences, indexes, roles, secrets
// and sinks. What needs a running dataflow waits or fails: populating a
// materialized view (CREATE without WITH NO DATA, REFRESH), reading one,
// SUBSCRIBE, reads of streams; durable savepoints and ROLLBACK TO are
// refused (errFakeNoPoints).
type fakeEngine struct {
	*Engine
	js       *fakeJetStream
	cat      *binder.OfflineCatalog
	sessions map[string]*session
}

func newFakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	roles, err := meta.OpenRoles("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{objs: map[string]*catalog.Descriptor{}, roles: roles}
	f := &fakeEngine{Engine: e, js: openFakeNode(t, e), cat: newOfflineCatalog(e.objs), sessions: map[string]*session{}}
	t.Cleanup(func() {
		for _, s := range f.sessions {
			s.Close()
		}
	})
	return f
}

// session returns the session named name, opening it as user (the
// bootstrap user when empty) at its first use.
func (f *fakeEngine) session(name, user string) *session {
	if s, ok := f.sessions[name]; ok {
		return s
	}
	if user == "" {
		user = meta.BootstrapUser
	}
	s := newSession(f.Engine, map[string]string{"user": user, "database": "streamdb"})
	f.sessions[name] = s
	return s
}

// run prepares and executes one statement as the extended protocol does
// (Parse, Bind with vals, Execute) and renders its outcome: the rows, then
// the command tag, or the error.
func run(s *session, sql string, paramTypes []types.Type, vals []types.Datum) string {
	var sb strings.Builder
	p, err := s.Prepare(context.Background(), sql, paramTypes)
	if err != nil {
		return errorLine(err)
	}
	rows := &fakeRows{}
	tag, err := p.Execute(context.Background(), vals, rows)
	for _, r := range rows.rows {
		sb.WriteString(fakeRow(r, p.Columns()))
		sb.WriteByte('\n')
	}
	if err != nil {
		sb.WriteString(errorLine(err))
		return sb.String()
	}
	if tag == "" {
		tag = "(no tag)"
	}
	sb.WriteString(tag + "\n")
	return sb.String()
}

// describe renders a prepared statement's parameter and result types.
func describe(s *session, sql string, paramTypes []types.Type) string {
	p, err := s.Prepare(context.Background(), sql, paramTypes)
	if err != nil {
		return errorLine(err)
	}
	var sb strings.Builder
	var ps []string
	for _, t := range p.ParamTypes() {
		ps = append(ps, t.String())
	}
	fmt.Fprintf(&sb, "params: (%s)\n", strings.Join(ps, ", "))
	if p.Columns() == nil {
		sb.WriteString("no data\n")
	}
	for _, c := range p.Columns() {
		fmt.Fprintf(&sb, "column %s %s%s\n", c.Name, c.Type, c.Mod.Suffix())
	}
	return sb.String()
}

type fakeRows struct{ rows []types.Row }

func (c *fakeRows) WriteRow(r types.Row) error {
	c.rows = append(c.rows, append(types.Row(nil), r...))
	return nil
}

var _ pgwire.RowWriter = (*fakeRows)(nil)

func fakeRow(r types.Row, cols []types.Column) string {
	out := make([]string, len(r))
	for i, d := range r {
		switch {
		case d.IsNull():
			out[i] = "NULL"
		case i < len(cols):
			out[i] = types.FormatColumn(d, cols[i])
		default:
			out[i] = types.FormatText(d, types.Text)
		}
	}
	return strings.Join(out, " | ")
}
