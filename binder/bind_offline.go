package binder

import (
	"fmt"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// OfflineCatalog binds statements against a catalog held in memory, with
// no server, NATS or Pebble: for tests of plans and their rewrites, in
// this package (testdata/plan) and outside it (plan/testdata). Objects are checked as CREATE
// checks them (sourceDescriptor, viewDescriptor).
type OfflineCatalog struct {
	objs   map[string]*catalog.Descriptor
	nextID uint32
	// OnWhere, when set, is told of each WHERE filter before the WHERE
	// rules (plan.WhereRules) rewrite it, and returns what is told the
	// plan after each rule.
	OnWhere func(f *plan.Filter) func(rule string, after plan.Node)
}

// NewOfflineCatalog returns an empty catalog.
func NewOfflineCatalog() *OfflineCatalog {
	return &OfflineCatalog{objs: map[string]*catalog.Descriptor{}, nextID: 1}
}

func (c *OfflineCatalog) lookup(name string) (*catalog.Descriptor, bool) {
	d, ok := c.objs[name]
	return d, ok
}

func (c *OfflineCatalog) whereTrace(f *plan.Filter) func(rule string, after plan.Node) {
	if c.OnWhere == nil {
		return nil
	}
	return c.OnWhere(f)
}

func (c *OfflineCatalog) systemTable(string) (*catalog.Descriptor, func() []types.Row, bool) {
	return nil, nil, false
}

// Exec runs CREATE STREAM, CREATE TABLE or CREATE MATERIALIZED VIEW
// against the catalog.
func (c *OfflineCatalog) Exec(sql string) error {
	st, err := front.Parse(sql)
	if err != nil {
		return err
	}
	var d *catalog.Descriptor
	switch n := st.Node.(type) {
	case *front.CreateSource:
		isTable := n.Kind == front.KindTable && !n.AppendOnly
		if d, err = sourceDescriptor(n, isTable); err != nil {
			return err
		}
		if isTable {
			d.Kind = catalog.KindTable
		}
	case *front.CreateMaterializedView:
		root, err := c.bindView(st, n)
		if err != nil {
			return err
		}
		opts, err := checkViewOptions(n.Options)
		if err != nil {
			return err
		}
		if d, err = viewDescriptor(n, root, opts); err != nil {
			return err
		}
	default:
		return fmt.Errorf("takes CREATE STREAM, TABLE or MATERIALIZED VIEW, not %T", st.Node)
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
	return c.bindView(st, n)
}

func (c *OfflineCatalog) bindView(st *front.Statement, n *front.CreateMaterializedView) (plan.Node, error) {
	root, err := c.bind(viewQuery(st, n))
	if err != nil {
		return nil, err
	}
	if root, err = decorrelateView(root); err != nil {
		return nil, err
	}
	if root, err = emptyZeroLimits(root); err != nil {
		return nil, err
	}
	return root, checkStreamable(root)
}

// bind binds a statement's query as a session does.
func (c *OfflineCatalog) bind(st *front.Statement) (plan.Node, error) {
	var e Engine
	return e.bindQueryIn(c, st, &boundParams{order: st.Params, stmt: st})
}

// Lookup returns the catalog object named name.
func (c *OfflineCatalog) Lookup(name string) (*catalog.Descriptor, bool) { return c.lookup(name) }
