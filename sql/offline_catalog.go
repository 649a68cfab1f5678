package sql

import (
	"fmt"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/front"
)

// NewOfflineCatalog returns an empty binder.OfflineCatalog whose CREATE
// STREAM, CREATE TABLE and CREATE MATERIALIZED VIEW are checked as the
// server checks them, with no server, NATS or Pebble: for tests of plans
// (binder/testdata/plan, plan/testdata).
func NewOfflineCatalog() *binder.OfflineCatalog { return newOfflineCatalog(nil) }

// newOfflineCatalog is NewOfflineCatalog over objs (the fake engine's
// catalog in unit tests).
func newOfflineCatalog(objs map[string]*catalog.Descriptor) *binder.OfflineCatalog {
	return binder.NewOfflineCatalog(objs, describeOffline)
}

// describeOffline builds the catalog entry of a CREATE statement as
// CREATE does (sourceDescriptor, viewDescriptor), without an id.
func describeOffline(c *binder.OfflineCatalog, st *front.Statement) (*catalog.Descriptor, error) {
	switch n := st.Node.(type) {
	case *front.CreateSource:
		isTable := n.Kind == front.KindTable && !n.AppendOnly
		d, err := sourceDescriptor(n, isTable)
		if err != nil {
			return nil, err
		}
		if isTable {
			d.Kind = catalog.KindTable
		}
		return d, nil
	case *front.CreateMaterializedView:
		root, err := c.BindViewStatement(st, n)
		if err != nil {
			return nil, err
		}
		opts, err := checkViewOptions(n.Options)
		if err != nil {
			return nil, err
		}
		return viewDescriptor(n, root, opts)
	}
	return nil, fmt.Errorf("takes CREATE STREAM, TABLE or MATERIALIZED VIEW, not %T", st.Node)
}
