package meta

import (
	"fmt"

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
// format; descs and, through update, the live catalog get the new
// descriptors. Each view is one synced batch, so a crash leaves every
// view at its old format or its new one, and the next start goes on from
// there; a view already moved is left alone. It runs whenever the
// catalog is loaded (Load): at start, after --restore-from and after
// ROLLBACK TO, so state restored from an older savepoint or checkpoint
// (whose files are never rewritten) moves too.
func (c *Catalog) MigrateViewFormats(descs []*catalog.Descriptor, viewPlan func(*catalog.Descriptor) (plan.Node, error), update func(*catalog.Descriptor)) error {
	st := c.cfg.Store
	for i, d := range descs {
		if d.Kind != catalog.KindView || d.Dataflow >= catalog.DataflowLatest {
			continue
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
		to, err := exec.MigrateView(st, b, d, root, ups)
		if err != nil || to == d.Dataflow {
			b.Close()
			if err != nil {
				return fmt.Errorf("materialized view %s: moving it to a newer format: %w", d.Name, err)
			}
			continue
		}
		nd := *d
		nd.Dataflow = to
		err = storage.PutDescriptor(b, &nd)
		if err == nil {
			err = st.RatchetFormat(b, to)
		}
		if err == nil {
			err = st.Commit(b, true)
		}
		b.Close()
		if err != nil {
			return fmt.Errorf("materialized view %s: moving it to format %d: %w", d.Name, to, err)
		}
		faults.Crash("view-format-moved")
		c.cfg.Log.Info("moved materialized view to a newer format", "view", d.Name, "from", d.Dataflow, "to", to)
		descs[i] = &nd
		update(&nd)
	}
	return nil
}
