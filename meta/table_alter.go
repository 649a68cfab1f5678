package meta

import (
	"context"
	"time"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// ALTER TABLE and ALTER STREAM's column changes, applied (sql/alter_table.go
// binds them and says what each action means): a table's committed state
// is rewritten to the new columns in the same Pebble batch as its
// descriptor, with every dataflow stopped, and the dataflows restart from
// the committed epoch: the table's changelog past its state decodes with
// the new columns, and views over it get its rows with the columns they
// were created with (exec.tableEdgeColumns). The catalog and the state
// are in Pebble, so a savepoint taken before the change restores the old
// columns with the old rows.

// ColumnChange is a bound ALTER of table or stream Old's columns into
// New, a copy of Old's descriptor with the actions applied.
type ColumnChange struct {
	Old, New *catalog.Descriptor
	// From[i] is the old position of New's column i, or -1 for a column
	// added, whose value in existing rows is Fill[i].
	From []int
	Fill []types.Datum
	// Rewrite: a table's rows change shape (a column added or dropped,
	// a type changed) and its dataflows decode its changelog anew.
	Rewrite bool
	// DroppedIndexes are the indexes a DROP COLUMN took with it.
	DroppedIndexes []catalog.Index
	// Convert maps the old position of a column whose type changes to
	// the conversion of its value, over the old row; Checks (named
	// CheckNames) are the CHECK constraints on such columns, over the
	// new row.
	Convert    map[int]expr.Expr
	Checks     []expr.Expr
	CheckNames []string
	// Shorten maps the new position of a varchar column whose length
	// limit is lowered (or set) to the new limit, which every row must
	// fit.
	Shorten map[int]types.Modifier
	// Others are other tables' descriptors the change rewrites too (their
	// foreign keys name a renamed column), committed with New.
	Others []*catalog.Descriptor
}

// CommitColumnChange stores the changed descriptor. A table whose rows
// change shape has its state rewritten in the same batch, with every
// dataflow stopped and restarted from the committed epoch, as
// CommitRename does; other changes only replace the descriptor. A value
// that does not convert or fit is a *sqlerr.Error, and the catalog and
// state stay as they were. The caller holds ddlMu.
func (x *DDL) CommitColumnChange(a *ColumnChange) error {
	if !a.Rewrite {
		if err := x.cfg.State.replaceTableDescriptors(x.cfg.Catalog, a); err != nil {
			return err
		}
		x.cfg.Live.Set(a.New)
		for _, d := range a.Others {
			x.cfg.Live.Set(d)
		}
		return nil
	}
	x.cfg.StateMu.Lock()
	defer x.cfg.StateMu.Unlock()
	return x.cfg.Coord.Exclusive(func() (err error) {
		x.cfg.Runtime.StopAll()
		x.cfg.ResetTables()
		defer x.cfg.Runtime.StartDeferred()
		loaded := false
		defer func() {
			// A change that failed (a value that does not convert or fit)
			// leaves the catalog as it was; its dataflows start again.
			if err != nil && !loaded {
				if lerr := x.cfg.Reload(); lerr != nil {
					x.cfg.Log.Error("restart the dataflows after a failed ALTER", "table", a.Old.Name, "err", lerr)
				}
			}
		}()
		if len(a.Shorten) > 0 {
			if err := x.checkChangelogApplied(a.Old); err != nil {
				return err
			}
		}
		b, err := x.cfg.State.rewriteTable(x.cfg.Catalog, a)
		if err != nil {
			return err
		}
		defer b.Close()
		committed := x.cfg.State.store.Commit(b, true)
		loaded = true
		if err := x.cfg.Reload(); err != nil {
			return err
		}
		return committed
	})
}

// checkChangelogApplied fails unless table d's committed state holds
// every message of its changelog. It runs with every dataflow stopped
// and stateMu held, so no commit is in flight.
func (x *DDL) checkChangelogApplied(d *catalog.Descriptor) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	last, err := x.cfg.Streams.LastOnSubject(ctx, d)
	if err != nil {
		return err
	}
	pos, err := x.cfg.State.Position(d.ID, 0)
	if err != nil {
		return err
	}
	if last > d.StartSeq && last > pos.Seq {
		return sqlerr.New(sqlerr.ObjectInUse, "table %q has writes its state does not hold yet", d.Name).
			WithHint("Run the ALTER TABLE again.")
	}
	return nil
}
