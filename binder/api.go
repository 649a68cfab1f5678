package binder

import (
	"context"
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Catalog is what binding reads of the catalog.
type Catalog interface {
	// Lookup returns the object named name (a relation, sequence, secret
	// or source of the public schema).
	Lookup(name string) (*catalog.Descriptor, bool)
	// SystemTable returns the system table name (pg_catalog.pg_class,
	// streamdb_streams, ...) with its rows, computed when read.
	SystemTable(name string) (*catalog.Descriptor, func() []types.Row, bool)
	// SequenceTable returns sequence d read as a relation (SELECT * FROM
	// seq), or false where sequences cannot be read so.
	SequenceTable(d *catalog.Descriptor) (*catalog.Descriptor, func() []types.Row, bool)
	// RelationOID is the pg_class OID of relation d (its system column
	// tableoid), 0 for none.
	RelationOID(d *catalog.Descriptor) int64
}

// Session is what binding needs of the session that runs a statement:
// the functions of sequences, called each time the bound expression is
// evaluated, and whether its transaction is read-only. seq is the
// sequence as the call names it: its name (text) or OID (integer).
type Session interface {
	ReadOnly() bool
	// Nextval draws the next value; checkPrivilege is false for an
	// identity column's sequence, which the table's INSERT privilege
	// covers.
	Nextval(seq any, checkPrivilege bool) (int64, error)
	Currval(seq any) (int64, error)
	Lastval() (int64, error)
	Setval(seq any, value int64, isCalled bool) (int64, error)
}

// NewParams returns the parameters of statement st, whose $n markers are
// parameters; sess may be nil where sequence functions cannot be called.
func NewParams(st *front.Statement, sess Session) *Params {
	p := &Params{stmt: st, sess: sess}
	if st != nil {
		p.order = st.Params
	}
	return p
}

// NoParams returns the parameters of a statement that takes none (a
// stored query, a generated column): a $n marker in it is a syntax error.
func NoParams(st *front.Statement) *Params { return &Params{stmt: st} }

// Declare sets the parameters' types: declared (the client's, in order),
// then unset for each parameter st has beyond them.
func (p *Params) Declare(declared []types.Type, unset types.Type) {
	p.types = slices.Clone(declared)
	if p.stmt == nil {
		return
	}
	for len(p.types) < p.stmt.NumParams {
		p.types = append(p.types, unset)
	}
}

// Types are the parameters' types: declared, or inferred while binding
// (types.Unknown for a parameter nothing typed).
func (p *Params) Types() []types.Type { return p.types }

// Statement is the statement being bound.
func (p *Params) Statement() *front.Statement { return p.stmt }

// Clone is a copy of p's statement, session, markers and types, to bind
// the statement again without changing p.
func (p *Params) Clone() *Params {
	return &Params{order: slices.Clone(p.order), types: slices.Clone(p.types), stmt: p.stmt, sess: p.sess}
}

// WithStatement is p for a part of the statement parsed on its own (a
// RETURNING list), whose nodes' offsets and parameter markers are st's
// (front.Statement.ReturningStatement); the parameters' types are shared
// with p: p's list is first grown to every parameter of the statement,
// so that what binding the part infers lands in it.
func (p *Params) WithStatement(st *front.Statement) *Params {
	for len(p.types) < st.NumParams {
		p.types = append(p.types, types.Unknown)
	}
	q := *p
	q.stmt = st
	q.order = st.Params
	return &q
}

// SubqueriesIn makes the subqueries of expressions bound with p bind
// against cat, until restore is called.
func (p *Params) SubqueriesIn(cat Catalog) (restore func()) {
	saved := p.subquery
	p.subquery = (&selectBinder{cat: cat, params: p}).bindSubquery
	return func() { p.subquery = saved }
}

// BindQuery binds a SELECT or a set operation of SELECTs (st.Node)
// against cat. Its schema is the visible output columns.
func BindQuery(cat Catalog, st *front.Statement, params *Params) (plan.Node, error) {
	sb := &selectBinder{cat: cat, params: params}
	if params.subquery == nil {
		params.subquery = sb.bindSubquery
	}
	if n, ok := st.Node.(ast.Node); ok {
		normalizeAggregates(n)
	}
	var root plan.Node
	var err error
	switch n := st.Node.(type) {
	case *ast.SelectStmt:
		root, err = sb.bindSelect(n)
	case *ast.SetOprStmt:
		root, err = sb.bindSetOpr(n)
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "expected a query")
	}
	if err == nil && st.WithTies {
		err = markWithTies(root)
	}
	return root, err
}

// bindSubquery binds subquery q of the statement sb binds: against the
// same catalog, seeing the WITH queries in scope where it appears and
// sharing the statement's parameters; corr is the query around it.
func (sb *selectBinder) bindSubquery(q ast.ResultSetNode, corr *correlation) (plan.Node, error) {
	inner := &selectBinder{cat: sb.cat, params: sb.params, ctes: sb.ctes, corr: corr}
	switch q := q.(type) {
	case *ast.SelectStmt:
		return inner.bindSelect(q)
	case *ast.SetOprStmt:
		return inner.bindSetOpr(q)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this kind of subquery is not supported yet")
}

// viewQuery is the statement of a view's query: st with the query as node.
func viewQuery(st *front.Statement, n *front.CreateMaterializedView) *front.Statement {
	q := *st
	q.Node = n.Query
	return &q
}

// BindContext makes binding with p stop once ctx is done, until the
// returned function is called (when the bind is over: a plan prepared
// now may bind again when it runs, under another context).
func (p *Params) BindContext(ctx context.Context) (done func()) { return p.bindContext(ctx) }
