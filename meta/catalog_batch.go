package meta

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/storage"
)

// A descriptor change that must commit with state in one batch (ALTER
// TABLE rewriting a table's rows, an index built or dropped, ALTER
// MATERIALIZED VIEW swapping a view's state, a rename, an identity
// column's new sequence) is written by these methods into the caller's
// batch, which the caller commits, synced, with the dataflows stopped;
// it then reloads the whole catalog (Load) so that the live catalog and
// the dataflows follow. The caller holds sql's ddlMu. Unlike Create and
// Put they leave the directory's state format alone: none of these
// changes makes a view of a newer format.

// NewIDIn takes the next object id in b: the id is handed out only if b
// commits. It reads the counter as committed, not as b holds it, so it
// is called at most once per batch. (Sinks draw their ids from the same
// counter.)
func (c *Catalog) NewIDIn(b *pebble.Batch) (uint32, error) {
	return c.cfg.Store.NextObjectID(b)
}

// PutIn writes ds in b, each under its name.
func (c *Catalog) PutIn(b *pebble.Batch, ds ...*catalog.Descriptor) error {
	for _, d := range ds {
		if err := storage.PutDescriptor(b, d); err != nil {
			return err
		}
	}
	return nil
}

// DeleteIn deletes the descriptor called name in b (the old name of a
// renamed object).
func (c *Catalog) DeleteIn(b *pebble.Batch, name string) error {
	return storage.DeleteDescriptor(b, name)
}
