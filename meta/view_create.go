package meta

import (
	"context"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// InstallView stores new view d, bound to root, marked populating until
// its backfill is done, and starts its dataflow at the oldest input its
// sources retain. With unpopulated view u (the REFRESH of a view created
// WITH NO DATA), d takes u's place under u's id; if a later step fails,
// u is put back. The caller holds ddlMu, under which it bound root and
// built d, and has recorded d's plan (RecordPlan).
func (x *DDL) InstallView(ctx context.Context, d *catalog.Descriptor, root plan.Node, u *catalog.Descriptor) error {
	// Its operators' state tables, by operator id.
	ups, err := x.upstreamPlans(d, root)
	if err != nil {
		return err
	}
	if _, err := exec.RecordStateLayout(d, root, ups); err != nil {
		return err
	}
	// Other sessions must not read the view until its backfill is done.
	bf, err := x.planBackfill(ctx, d, root)
	if err != nil {
		return err
	}
	markPopulating(d, bf)
	if u != nil {
		err = x.putPopulated(d, u)
	} else {
		err = x.Create(d)
	}
	if err != nil {
		return err
	}
	undo := func() {
		x.Drop(d)
		if u != nil {
			x.putUnpopulated(u)
		}
	}
	if err := x.InitPositions(ctx, d, root); err != nil {
		undo()
		return err
	}
	if err := x.StartView(d, root); err != nil {
		undo()
		return err
	}
	return nil
}

// Backfill checkpoints the catalog with new view d (InstallView's) and
// waits for its backfill; backfilled is false when sources are paused
// (ALTER SYSTEM PAUSE) and the backfill waits for RESUME. If the
// statement fails on the way (canceled, or the view stopped), abandon
// undoes the view: AbandonView, or Unpopulate for a REFRESH. The caller
// holds no lock.
func (x *DDL) Backfill(ctx context.Context, d *catalog.Descriptor, abandon func(context.Context, *catalog.Descriptor)) (backfilled bool, err error) {
	created := false
	defer func() {
		if !created && ctx.Err() != nil {
			// Canceled or past statement_timeout: the statement failed,
			// so the view it was creating goes too.
			abandon(context.WithoutCancel(ctx), d)
		}
	}()
	if err := x.Checkpoint(ctx); err != nil {
		return false, err
	}
	rt := x.cfg.Runtime
	if rt.Paused() {
		// Waiting for the backfill here would block the session.
		x.cfg.Log.Info("created materialized view; backfill waits for ALTER SYSTEM RESUME", "view", d.Name)
		created = true
		return false, nil
	}
	// Return once the view covers everything its sources held when it
	// was created, as CREATE MATERIALIZED VIEW does in PostgreSQL.
	start := time.Now()
	targets, err := rt.Targets(ctx, []uint32{d.ID})
	if err != nil {
		return false, err
	}
	if err := x.cfg.Wait(ctx, []uint32{d.ID}, targets, "backfill of "+d.Name); err != nil {
		if ctx.Err() == nil && rt.ViewFailure(d.ID) != nil {
			// The view stopped during its backfill (a row failed WITH
			// (on_error = 'fail'), or its input is gone): the statement
			// fails, as PostgreSQL's does, and leaves no view behind.
			abandon(context.WithoutCancel(ctx), d)
			cause := sqlerr.From(err)
			hint := cause.Hint
			if hint == "" {
				hint = "Fix the input or the query, or create the view without on_error = 'fail' to skip rows that fail (listed in streamdb_view_errors)."
			}
			return false, &sqlerr.Error{Code: cause.Code, Message: cause.Message, Detail: "The materialized view was not created.", Hint: hint}
		}
		return false, err
	}
	x.FinishPopulating(d)
	created = true
	x.cfg.Log.Info("created materialized view", "view", d.Name, "backfill", time.Since(start))
	return true, nil
}

// AbandonView drops a view whose CREATE did not complete, unless it was
// already dropped or replaced, and checkpoints the catalog without it.
// It takes ddlMu.
func (x *DDL) AbandonView(ctx context.Context, d *catalog.Descriptor) {
	x.dropAbandonedView(d)
	if err := x.Checkpoint(ctx); err != nil {
		x.cfg.Log.Error("checkpoint after dropping the view of a canceled CREATE", "view", d.Name, "err", err)
	}
}

// dropAbandonedView drops view d under ddlMu, unless it was already
// dropped or replaced.
func (x *DDL) dropAbandonedView(d *catalog.Descriptor) {
	x.cfg.DDLMu.Lock()
	defer x.cfg.DDLMu.Unlock()
	if cur, ok := x.cfg.Live.Lookup(d.Name); !ok || cur.ID != d.ID {
		return
	}
	if err := x.Drop(d); err != nil {
		x.cfg.Log.Error("drop the view of a canceled CREATE", "view", d.Name, "err", err)
	}
}

// putPopulated stores view d, which replaces the unpopulated view u
// under u's id, creation time (so owner and grants), comments and
// indexes. The caller holds ddlMu.
func (x *DDL) putPopulated(d, u *catalog.Descriptor) error {
	d.ID, d.CreatedAt, d.Comment, d.Indexes = u.ID, u.CreatedAt, u.Comment, u.Indexes
	for i := range d.Columns {
		if i < len(u.Columns) {
			d.Columns[i].Comment = u.Columns[i].Comment
		}
	}
	return x.Put(d)
}

// Unpopulate puts back unpopulated view u in place of view d, made from
// it by a REFRESH that did not complete, unless d was dropped or
// replaced since, and checkpoints the catalog. It takes ddlMu.
func (x *DDL) Unpopulate(ctx context.Context, d, u *catalog.Descriptor) {
	x.unpopulateLocked(d, u)
	if err := x.Checkpoint(ctx); err != nil {
		x.cfg.Log.Error("checkpoint after a failed REFRESH", "view", d.Name, "err", err)
	}
}

func (x *DDL) unpopulateLocked(d, u *catalog.Descriptor) {
	x.cfg.DDLMu.Lock()
	defer x.cfg.DDLMu.Unlock()
	if cur, ok := x.cfg.Live.Lookup(d.Name); !ok || cur.ID != d.ID {
		return
	}
	if err := x.Drop(d); err != nil {
		x.cfg.Log.Error("drop the view of a failed REFRESH", "view", d.Name, "err", err)
		return
	}
	x.putUnpopulated(u)
}

// putUnpopulated stores unpopulated view u again, after the view a
// failed REFRESH made of it was dropped. The caller holds ddlMu.
func (x *DDL) putUnpopulated(u *catalog.Descriptor) {
	if err := x.cfg.Catalog.Put(u); err != nil {
		x.cfg.Log.Error("put back the unpopulated view of a failed REFRESH", "view", u.Name, "err", err)
		return
	}
	x.cfg.Live.Set(u)
}
