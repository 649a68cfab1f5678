package binder

import (
	"fmt"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// OfflineCatalog binds statements against a catalog held in memory, with
// no server, NATS or Pebble: for tests of plans and their rewrites, in
// this package (testdata/plan) and outside it (plan/testdata, sql's
// sessions over fakes). Objects are described by its Describer, which
// sql.NewOfflineCatalog gives CREATE's own checks.
type OfflineCatalog struct {
	objs     map[string]*catalog.Descriptor
	nextID   uint32
	describe Describer
	// OnWhere, when set, is told of each WHERE filter before the WHERE
	// rules (plan.WhereRules) rewrite it, and returns what is told the
	// plan after each rule.
	OnWhere func(f *plan.Filter) func(rule string, after plan.Node)
}

// Describer builds the catalog entry (without an id) of a CREATE STREAM,
// CREATE TABLE or CREATE MATERIALIZED VIEW statement as CREATE checks it;
// a view's query binds against c (BindViewStatement).
type Describer func(c *OfflineCatalog, st *front.Statement) (*catalog.Descriptor, error)

// NewOfflineCatalog returns a catalog of objs (nil: empty), which Exec
// adds to with the entries describe builds.
func NewOfflineCatalog(objs map[string]*catalog.Descriptor, describe Describer) *OfflineCatalog {
	if objs == nil {
		objs = map[string]*catalog.Descriptor{}
	}
	return &OfflineCatalog{objs: objs, nextID: 1, describe: describe}
}

// Lookup returns the catalog object named name.
func (c *OfflineCatalog) Lookup(name string) (*catalog.Descriptor, bool) {
	d, ok := c.objs[name]
	return d, ok
}

func (c *OfflineCatalog) whereTrace(f *plan.Filter) func(rule string, after plan.Node) {
	if c.OnWhere == nil {
		return nil
	}
	return c.OnWhere(f)
}

// SystemTable finds none: an offline catalog has no system tables.
func (c *OfflineCatalog) SystemTable(string) (*catalog.Descriptor, func() []types.Row, bool) {
	return nil, nil, false
}

// SequenceTable reads no sequence: it has no values offline.
func (c *OfflineCatalog) SequenceTable(*catalog.Descriptor) (*catalog.Descriptor, func() []types.Row, bool) {
	return nil, nil, false
}

// RelationOID is a user relation's pg_class OID, as the server numbers it.
func (c *OfflineCatalog) RelationOID(d *catalog.Descriptor) int64 {
	switch d.Kind {
	case catalog.KindStream, catalog.KindTable, catalog.KindView, catalog.KindUnpopulatedView, catalog.KindPlainView, catalog.KindSequence:
		return int64(pgcatalog.FirstUserOID + d.ID)
	}
	return 0
}

// Exec runs CREATE STREAM, CREATE TABLE or CREATE MATERIALIZED VIEW
// against the catalog.
func (c *OfflineCatalog) Exec(sql string) error {
	st, err := front.Parse(sql)
	if err != nil {
		return err
	}
	switch st.Node.(type) {
	case *front.CreateSource, *front.CreateMaterializedView:
	default:
		return fmt.Errorf("takes CREATE STREAM, TABLE or MATERIALIZED VIEW, not %T", st.Node)
	}
	d, err := c.describe(c, st)
	if err != nil {
		return err
	}
	if _, ok := c.objs[d.Name]; ok {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", d.Name)
	}
	d.ID = c.nextID
	c.nextID++
	c.objs[d.Name] = d
	return nil
}

// BindView binds a CREATE MATERIALIZED VIEW statement's query as CREATE
// does (refusing what a view cannot compute) and returns its plan.
func (c *OfflineCatalog) BindView(sql string) (plan.Node, error) {
	st, err := front.Parse(sql)
	if err != nil {
		return nil, err
	}
	n, ok := st.Node.(*front.CreateMaterializedView)
	if !ok {
		return nil, fmt.Errorf("takes CREATE MATERIALIZED VIEW, not %T", st.Node)
	}
	return c.BindViewStatement(st, n)
}

// BindViewStatement is BindView of a parsed statement.
func (c *OfflineCatalog) BindViewStatement(st *front.Statement, n *front.CreateMaterializedView) (plan.Node, error) {
	root, err := BindView(c, st, n)
	if err != nil {
		return nil, err
	}
	return root, CheckStreamable(root)
}

// Bind binds a query (SELECT) as a session does and returns its plan.
func (c *OfflineCatalog) Bind(sql string) (plan.Node, error) {
	st, err := front.Parse(sql)
	if err != nil {
		return nil, err
	}
	return c.bind(st)
}

// bind binds a statement's query as a session does.
func (c *OfflineCatalog) bind(st *front.Statement) (plan.Node, error) {
	return BindQuery(c, st, NewParams(st, nil))
}
