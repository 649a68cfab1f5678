package meta

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/faults"
	"streamdb/plan"
	"streamdb/storage"
)

// CheckViewFormats refuses a catalog with a view whose state format this
// binary cannot read (a directory written by a newer streamdb, or a view
// too old that did not move forward), before any view starts: a view
// misread would serve wrong rows. Before the views move, check is
// catalog.CheckMigratable; once they have, catalog.CheckFormat.
func CheckViewFormats(descs []*catalog.Descriptor, check func(what string, v catalog.FormatVersion) error) error {
	for _, d := range descs {
		if d.Kind != catalog.KindView {
			continue
		}
		if err := check("materialized view "+d.Name, d.Dataflow); err != nil {
			return err
		}
	}
	return nil
}

// MigrateViewFormats moves every view of descs, before any starts, to the
// newest format its state is in or is rewritten to (exec.MigrateView of
// the plan viewPlan returns, with the plans of the views its dataflow
// computes itself), and records it in its descriptor and the directory's
// format; a view of a format this binary builds that lacks its state
// layout (created before layouts were recorded) gets it recorded
// (exec.RecordStateLayout, at the format reached: the numbering its state
// has). descs and, through update, the live catalog get the new
// descriptors. Each view is one synced batch, so a crash leaves every
// view at its old format and layout or its new ones, and the next start
// goes on from there; a view already moved and recorded is left alone.
// It runs whenever the catalog is loaded (Load): at start, after
// --restore-from and after ROLLBACK TO, so state restored from an older
// savepoint or checkpoint (whose files are never rewritten) moves too.
func (c *Catalog) MigrateViewFormats(descs []*catalog.Descriptor, viewPlan func(*catalog.Descriptor) (plan.Node, error), update func(*catalog.Descriptor)) error {
	st := c.cfg.Store
	for i, d := range descs {
		if d.Kind != catalog.KindView || d.Dataflow >= catalog.DataflowLatest && d.NextOp != 0 {
			continue // moved and recorded already
		}
		root, err := viewPlan(d)
		if err != nil {
			return fmt.Errorf("materialized view %s: %w", d.Name, err)
		}
		ups, err := UpstreamPlans(d, root, viewPlan)
		if err != nil {
			return fmt.Errorf("materialized view %s: %w", d.Name, err)
		}
		b := st.NewBatch()
		nd, err := migrateView(st, b, d, root, ups)
		if err != nil || nd == nil {
			b.Close()
			if err != nil {
				return fmt.Errorf("materialized view %s: moving it to a newer format: %w", d.Name, err)
			}
			continue
		}
		err = storage.PutDescriptor(b, nd)
		if err == nil {
			err = st.RatchetFormat(b, nd.Dataflow)
		}
		if err == nil {
			err = st.Commit(b, true)
		}
		b.Close()
		if err != nil {
			return fmt.Errorf("materialized view %s: moving it to format %d: %w", d.Name, nd.Dataflow, err)
		}
		if nd.Dataflow != d.Dataflow {
			faults.Crash("view-format-moved")
			c.cfg.Log.Info("moved materialized view to a newer format", "view", d.Name, "from", d.Dataflow, "to", nd.Dataflow)
		} else {
			c.cfg.Log.Info("recorded the state layout of a materialized view", "view", d.Name)
		}
		descs[i] = nd
		update(nd)
	}
	return nil
}

// migrateView writes to b what moves view d (bound to root; ups as for
// StartView) forward: the rewrites of its state, and returns its new
// descriptor, nil when nothing changes. A view left older than
// catalog.DataflowMinSupported is not built, so its layout is left
// unrecorded (the steps that would move it later read it positionally).
func migrateView(st *storage.Store, b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups exec.UpstreamPlans) (*catalog.Descriptor, error) {
	nd := *d
	if d.Dataflow < catalog.DataflowLatest {
		to, err := exec.MigrateView(st, b, d, root, ups)
		if err != nil {
			return nil, err
		}
		nd.Dataflow = to
	}
	if nd.Dataflow >= catalog.DataflowVNodeKeys && nd.VNodes == 0 {
		// The count the steps to DataflowVNodeKeys keyed its state by.
		nd.VNodes = catalog.DefaultVNodes
	}
	recorded := false
	if nd.Dataflow >= catalog.DataflowMinSupported {
		var err error
		if recorded, err = exec.RecordStateLayout(&nd, root, ups); err != nil {
			return nil, err
		}
	}
	if !recorded && nd.Dataflow == d.Dataflow {
		return nil, nil
	}
	return &nd, nil
}
