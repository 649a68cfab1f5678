package meta

import (
	"log/slog"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/storage"
)

// The catalog's descriptors (streams, tables, views, sequences, sources,
// secrets, plain and unpopulated views) live in Pebble, one record per
// name (storage.PutDescriptor), beside the object id counter and the data
// directory's state format. Catalog is their only writer (tests/arch
// checks that no other package calls storage's writers): it gives new
// objects their ids, writes, replaces and deletes descriptors, alone or
// in a batch with state (catalog_batch.go), and loads them at start
// (catalog_load.go). The live catalog, the
// descriptors by name that statements read, is sql's: after each write
// here sql puts the same descriptor there, so the two agree whenever the
// catalog lock (sql's ddlMu) is released.
//
// Invariants kept here:
//   - An object id is handed out once per data directory: it is taken
//     from the counter in the same synced batch that stores the
//     descriptor, so a crash loses both or neither. (ROLLBACK TO restores
//     the counter with the rest of the state and may hand an id out
//     again; what caches by object holds the descriptor, not the id.)
//   - Create and Put never store a materialized view with a state format
//     newer than the data directory's: the directory's format is raised
//     in the batch that stores the view.
//   - A rename deletes the old name's record in the batch that writes the
//     new one, so that no start finds the object under both names.

// CatalogConfig is what the catalog works on: one node's components.
type CatalogConfig struct {
	Store *storage.Store
	// Broker finds or creates the JetStream stream of each stream and
	// table when the catalog is loaded.
	Broker *broker.Broker
	Log    *slog.Logger
}

// Catalog is one server's stored catalog. Its methods take no lock of
// their own: the caller holds sql's ddlMu (the catalog lock) for every
// write, so that a name checked free stays free until it is stored, and
// takes catMu itself afterwards to put the descriptor in the live
// catalog.
type Catalog struct {
	cfg CatalogConfig
}

// NewCatalog returns the catalog stored in cfg.Store.
func NewCatalog(cfg CatalogConfig) *Catalog { return &Catalog{cfg: cfg} }

// Create gives d a new object id and stores it, synced.
func (c *Catalog) Create(d *catalog.Descriptor) error { return c.store(d, true) }

// Put stores d under the id it has (an object taking the place of
// another of the same id, such as a populated view replacing its
// unpopulated one), synced.
func (c *Catalog) Put(d *catalog.Descriptor) error { return c.store(d, false) }

// store writes d durably (with the state format a view's dataflow needs,
// in the same batch); with newID it first gives d a new object id.
func (c *Catalog) store(d *catalog.Descriptor, newID bool) error {
	st := c.cfg.Store
	b := st.NewBatch()
	defer b.Close()
	if newID {
		id, err := st.NextObjectID(b)
		if err != nil {
			return err
		}
		d.ID = id
	}
	if err := storage.PutDescriptor(b, d); err != nil {
		return err
	}
	if d.Kind == catalog.KindView {
		if err := st.RatchetFormat(b, d.Dataflow); err != nil {
			return err
		}
	}
	return st.Commit(b, true)
}

// Replace writes d in place of old (the same object: same id, possibly
// another name), synced. It suits changes that touch no running
// dataflow: plain views, comments, storage options, a sequence's options,
// a secret's value; a view's state format is left as it was.
func (c *Catalog) Replace(old, d *catalog.Descriptor) error {
	st := c.cfg.Store
	b := st.NewBatch()
	defer b.Close()
	if old.Name != d.Name {
		if err := storage.DeleteDescriptor(b, old.Name); err != nil {
			return err
		}
	}
	if err := storage.PutDescriptor(b, d); err != nil {
		return err
	}
	return st.Commit(b, true)
}

// Rename writes ds (the renamed object first, then the objects whose
// definitions name it) and deletes the descriptor stored under oldName,
// in one synced batch. Unlike Replace it suits objects with running
// dataflows, which the caller stops and starts again around it.
func (c *Catalog) Rename(oldName string, ds ...*catalog.Descriptor) error {
	st := c.cfg.Store
	b := st.NewBatch()
	defer b.Close()
	if err := c.DeleteIn(b, oldName); err != nil {
		return err
	}
	if err := c.PutIn(b, ds...); err != nil {
		return err
	}
	return st.Commit(b, true)
}

// Amend writes d in place of the record of its name without waiting for
// the write to be synced: for changes whose loss is harmless, because
// the next start finds the same thing again (a view's populating flag,
// cleared once the view is found populated). A view's state format is
// left as it was.
func (c *Catalog) Amend(d *catalog.Descriptor) error {
	st := c.cfg.Store
	b := st.NewBatch()
	defer b.Close()
	if err := storage.PutDescriptor(b, d); err != nil {
		return err
	}
	return st.Commit(b, false)
}

// Drop deletes d's descriptor and the object's state and source
// positions (a view has none), synced. Stopping its dataflow first is the
// caller's, and so is its JetStream stream, which Drop leaves alone.
func (c *Catalog) Drop(d *catalog.Descriptor) error {
	st := c.cfg.Store
	b := st.NewBatch()
	defer b.Close()
	if err := storage.DeleteDescriptor(b, d.Name); err != nil {
		return err
	}
	if err := storage.DeleteObject(b, d.ID); err != nil {
		return err
	}
	return st.Commit(b, true)
}
