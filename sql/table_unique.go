package sql

import (
	"context"
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A table's UNIQUE constraint is backed by a unique index of the same
// name (catalog.Index with Constraint set), as PostgreSQL backs one. Its
// entries are kept by the table's dataflow like a CREATE UNIQUE INDEX's
// (exec/index.go), so the constraint's checks (checkUniqueIndexes), ON
// CONFLICT's arbiters and the foreign keys that reference its columns
// read by key, and nothing holds the table in memory. CREATE TABLE makes
// the indexes empty with the table; ALTER TABLE ... ADD CONSTRAINT builds
// one from the table's stored rows, a batch at a time, then looks for a
// duplicate along the built entries, where equal values are neighbours;
// DROP CONSTRAINT drops it with its entries. A table stored by an older
// streamdb, whose UNIQUE constraints had no index, gets them built when
// it starts, before its dataflow runs (backfillConstraintIndexes).

// uniqueKey encodes row's values of cols; ok is false when one is NULL.
func uniqueKey(cols []int, row types.Row) (string, bool) {
	var b []byte
	for _, c := range cols {
		if row[c].IsNull() {
			return "", false
		}
		b = exec.AppendKey(b, row[c])
	}
	return string(b), true
}

// constraintIndexes returns d's indexes as d's UNIQUE constraints want
// them: with a backing index for each constraint that has none (in a
// free slot), without the backing indexes of constraints d no longer
// has. added are the indexes it added.
func constraintIndexes(d *catalog.Descriptor) (indexes, added []catalog.Index) {
	for _, ix := range d.Indexes {
		if c := d.Constraint(ix.Name); ix.Constraint && (c == nil || c.Type != "u") {
			continue
		}
		indexes = append(indexes, ix)
	}
	for _, c := range d.Constraints {
		if c.Type != "u" || slices.ContainsFunc(indexes, func(ix catalog.Index) bool { return ix.Constraint && ix.Name == c.Name }) {
			continue
		}
		ix := catalog.Index{Name: c.Name, Unique: true, Constraint: true}
		for _, col := range c.Columns {
			ix.Columns = append(ix.Columns, catalog.IndexColumn{Name: col})
		}
		ix.Seq, ix.Table = freeIndexSlot(&catalog.Descriptor{Indexes: indexes})
		indexes = append(indexes, ix)
		added = append(added, ix)
	}
	return indexes, added
}

// constraintOf returns the UNIQUE constraint index ix of table d backs,
// or nil for an index of its own (CREATE INDEX).
func constraintOf(d *catalog.Descriptor, ix *catalog.Index) *catalog.Constraint {
	if !ix.Constraint {
		return nil
	}
	return d.Constraint(ix.Name)
}

// backfillConstraintIndexes gives table d, as stored by a streamdb that
// kept no index for UNIQUE constraints, the backing index of each of
// them, built from its stored rows before its dataflow starts (Load calls
// startTable with the dataflows stopped), and stores d with them. d is
// the live catalog's descriptor, changed in place as the load does.
func (e *Engine) backfillConstraintIndexes(d *catalog.Descriptor) error {
	indexes, added := constraintIndexes(d)
	if len(added) == 0 {
		return nil
	}
	next := *d
	next.Indexes = indexes
	for i := range added {
		dup, err := e.state.BuildIndexEntries(&next, &added[i])
		if err != nil {
			return fmt.Errorf("build the index of UNIQUE constraint %s of table %s: %w", added[i].Name, d.Name, err)
		}
		if dup != nil {
			// Checks stay right: a value held twice is taken.
			e.log.Warn("table holds rows its UNIQUE constraint does not allow", "table", d.Name, "constraint", added[i].Name)
		}
		e.log.Info("built the index of a UNIQUE constraint", "table", d.Name, "constraint", added[i].Name)
	}
	if err := e.cat.Put(&next); err != nil {
		return err
	}
	d.Indexes = indexes
	return nil
}

// addUniqueConstraint runs ALTER TABLE ... ADD UNIQUE: next is table d
// with the constraint c added. Its index is built from the table's rows
// with the dataflows stopped (restartWith, as CREATE INDEX); a value held
// twice fails it as PostgreSQL does. The caller holds ddlMu.
func (e *Engine) addUniqueConstraint(ctx context.Context, d, next *catalog.Descriptor, c catalog.Constraint) error {
	// The entries are built from the table's stored rows: they must hold
	// every write acknowledged before this statement.
	if err := e.waitTableCurrent(ctx, d, "ALTER TABLE"); err != nil {
		return err
	}
	indexes, added := constraintIndexes(next)
	next.Indexes = indexes
	var dup types.Row
	err := e.restartWith(func(b *meta.StateBatch) error {
		for i := range added {
			var err error
			if dup, err = e.state.BuildIndexEntries(next, &added[i]); err != nil {
				return err
			}
			if dup != nil {
				// Nothing changes but the entries built, taken away.
				return meta.DeleteIndexEntriesIn(b, next.ID, &added[i])
			}
		}
		return e.cat.PutIn(b, next)
	})
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "adding constraint %s failed: %v", c.Name, err)
	}
	if dup != nil {
		cols, err := d.Schema()
		if err != nil {
			return err
		}
		ix := added[0]
		names, vals := indexKeyText(&ix, cols, dup)
		return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("could not create unique index %q", c.Name),
			Detail: fmt.Sprintf("Key (%s)=(%s) is duplicated.", names, vals)}
	}
	return nil
}

// dropUniqueConstraint runs ALTER TABLE ... DROP CONSTRAINT of table d's
// UNIQUE constraint name with its index (the foreign keys that depend on
// it already gone), with the dataflows stopped (restartWith, as DROP
// INDEX). The caller holds ddlMu.
func (e *Engine) dropUniqueConstraint(d *catalog.Descriptor, name string) error {
	next := *d
	next.Constraints = slices.DeleteFunc(slices.Clone(d.Constraints), func(x catalog.Constraint) bool { return x.Name == name })
	if len(next.Constraints) == 0 {
		next.Constraints = nil
	}
	next.Indexes, _ = constraintIndexes(&next)
	err := e.restartWith(func(b *meta.StateBatch) error {
		for i := range d.Indexes {
			if ix := &d.Indexes[i]; ix.Constraint && ix.Name == name {
				if err := meta.DeleteIndexEntriesIn(b, d.ID, ix); err != nil {
					return err
				}
			}
		}
		return e.cat.PutIn(b, &next)
	})
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "dropping constraint %s failed: %v", name, err)
	}
	return nil
}

// checkConstraints checks a statement's changes to table ts.d against the
// table's CHECK and UNIQUE constraints, on top of base (the statement's
// transaction's earlier changes to the table, nil outside one). A
// statement of a transaction reads its snapshot (ts.Log() nil), but its
// UNIQUE values are checked against the table as it is now, as
// PostgreSQL checks them against committed and in-progress rows.
//
// deferred, when not nil (a transaction's statement), tells the
// constraints that wait for its COMMIT.
func (e *Engine) checkConstraints(ctx context.Context, ts *tableState, base, changes []exec.Change, deferred func(catalog.Constraint) bool) error {
	d := e.current(ts.d)
	if len(d.Constraints) == 0 {
		return nil
	}
	if err := checkRows(d, ts.cols, changes); err != nil {
		return err
	}
	if !hasConstraint(d, "u") {
		return nil
	}
	now := ts
	if ts.Log() == nil {
		log := e.tables.Log(d.ID)
		log.Lock()
		defer log.Unlock()
		if err := e.ensureCurrent(ctx, d, log); err != nil {
			return err
		}
		var err error
		if now, err = e.openTableState(d, log); err != nil {
			return err
		}
		defer now.Close()
	}
	return checkUniqueConstraints(d, now, base, changes, deferred)
}

func hasConstraint(d *catalog.Descriptor, typ string) bool {
	for _, c := range d.Constraints {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// txChanges returns the open transaction's changes to table d so far, in
// changelog order (nil outside a transaction).
func (s *session) txChanges(d *catalog.Descriptor) []exec.Change {
	if s.tx == nil {
		return nil
	}
	for _, w := range s.tx.tables {
		if w.d.ID == d.ID {
			return exec.ChangelogOrder(w.stmts)
		}
	}
	return nil
}

// current returns the catalog's descriptor of table d now: a statement
// bound before ALTER TABLE ... ADD CONSTRAINT is checked against the new
// constraint when it commits.
func (e *Engine) current(d *catalog.Descriptor) *catalog.Descriptor {
	if cur, ok := e.lookup(d.Name); ok && cur.ID == d.ID {
		return cur
	}
	return d
}
