package sql

import (
	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/types"
)

// catalogReader is a catalog statements bind against: the engine's, a
// session's (system tables computed for its role), an AS OF point's, or
// the one a WITH NO DATA view is checked against.
type catalogReader interface {
	lookup(name string) (*catalog.Descriptor, bool)
	systemTable(name string) (*catalog.Descriptor, func() []types.Row, bool)
}

// bindCatalog is a catalogReader as the binder reads it (binder.Catalog).
type bindCatalog struct{ c catalogReader }

func (b bindCatalog) Lookup(name string) (*catalog.Descriptor, bool) { return b.c.lookup(name) }

func (b bindCatalog) SystemTable(name string) (*catalog.Descriptor, func() []types.Row, bool) {
	return b.c.systemTable(name)
}

// SequenceTable reads a sequence as a relation where the catalog can
// (the live catalog; not an AS OF point).
func (b bindCatalog) SequenceTable(d *catalog.Descriptor) (*catalog.Descriptor, func() []types.Row, bool) {
	sr, ok := b.c.(sequenceReader)
	if !ok {
		return nil, nil, false
	}
	t, rows := sr.sequenceTable(d)
	return t, rows, true
}

func (b bindCatalog) RelationOID(d *catalog.Descriptor) int64 { return relationOID(d) }

// bindQueryIn binds a SELECT against cat.
func bindQueryIn(cat catalogReader, st *front.Statement, params *binder.Params) (plan.Node, error) {
	return binder.BindQuery(bindCatalog{cat}, st, params)
}

// bindQuery binds a SELECT statement against the engine's catalog.
func (e *Engine) bindQuery(st *front.Statement, params *binder.Params) (plan.Node, error) {
	return bindQueryIn(e, st, params)
}

// bindView binds the query of CREATE (or ALTER) MATERIALIZED VIEW n
// against the engine's catalog (binder.BindView).
func (e *Engine) bindView(st *front.Statement, n *front.CreateMaterializedView) (plan.Node, error) {
	return binder.BindView(bindCatalog{e}, st, n)
}

// sequenceCalls is a session as the binder calls the functions of
// sequences and asks whether its transaction is read-only
// (binder.Session).
type sequenceCalls struct{ s *session }

func (c sequenceCalls) ReadOnly() bool { return c.s.readOnly() }

func (c sequenceCalls) Nextval(seq any, checkPrivilege bool) (int64, error) {
	return c.s.callNextval(seq, checkPrivilege)
}

func (c sequenceCalls) Currval(seq any) (int64, error) { return c.s.callCurrval(seq) }

func (c sequenceCalls) Lastval() (int64, error) { return c.s.callLastval() }

func (c sequenceCalls) Setval(seq any, value int64, isCalled bool) (int64, error) {
	return c.s.callSetval(seq, value, isCalled)
}

// params returns the parameters of statement st run by s.
func (s *session) params(st *front.Statement) *binder.Params {
	return binder.NewParams(st, sequenceCalls{s})
}
