package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage"
)

// DROP COLUMN takes with it, as PostgreSQL does, the table's own indexes
// and constraints (UNIQUE, CHECK, FOREIGN KEY) that involve the column.
// Another table's foreign key that references the column is refused
// without CASCADE (2BP01) and dropped with it, with a NOTICE.

// childKey is a foreign key of another table.
type childKey struct{ table, name string }

// dropColumnDependents removes from a.d the indexes and constraints on
// column col, and records the other tables' foreign keys that reference
// it.
func (a *columnChange) dropColumnDependents(ctx context.Context, col string, cascade bool) error {
	if a.d.Kind != catalog.KindTable {
		return nil
	}
	var children []childKey
	for _, t := range a.s.e.objects(catalog.KindTable) {
		if t.ID == a.d.ID {
			continue
		}
		for _, fk := range t.Constraints {
			if fk.Type == "f" && fk.RefTable == a.d.Name && slices.Contains(fk.RefColumns, col) {
				children = append(children, childKey{t.Name, fk.Name})
			}
		}
	}
	if len(children) > 0 && !cascade {
		details := make([]string, len(children))
		for i, c := range children {
			details[i] = fmt.Sprintf("constraint %s on table %s depends on column %s of table %s", c.name, c.table, col, a.d.Name)
		}
		return withDetail(sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop column %s of table %s because other objects depend on it", col, a.d.Name).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too."), "%s", strings.Join(details, "\n"))
	}
	a.foreignKeys = append(a.foreignKeys, children...)
	a.d.Constraints = slices.DeleteFunc(slices.Clone(a.d.Constraints), func(c catalog.Constraint) bool {
		return slices.Contains(c.Columns, col)
	})
	if len(a.d.Constraints) == 0 {
		a.d.Constraints = nil
	}
	var keep []catalog.Index
	for _, ix := range a.d.Indexes {
		if slices.ContainsFunc(ix.Columns, func(c catalog.IndexColumn) bool { return c.Name == col }) {
			a.droppedIndexes = append(a.droppedIndexes, ix)
		} else {
			keep = append(keep, ix)
		}
	}
	a.d.Indexes = keep
	return nil
}

// dropChildKeys drops the other tables' foreign keys a DROP COLUMN ...
// CASCADE takes, before the column goes, telling the client. The caller
// holds ddlMu.
func (e *Engine) dropChildKeys(ctx context.Context, keys []childKey) error {
	var lines []string
	for _, k := range keys {
		cur, ok := e.lookup(k.table)
		if !ok {
			continue
		}
		if err := e.setConstraints(cur, slices.DeleteFunc(slices.Clone(cur.Constraints), func(c catalog.Constraint) bool { return c.Name == k.name })); err != nil {
			return err
		}
		lines = append(lines, "drop cascades to constraint "+k.name+" on table "+k.table)
	}
	cascadeNotice(ctx, lines)
	return nil
}

// clearIndexes removes the entries of indexes of object id in b.
func clearIndexes(b *pebble.Batch, id uint32, indexes []catalog.Index) error {
	for i := range indexes {
		p := exec.IndexPrefix(id, &indexes[i])
		if err := b.DeleteRange(p, storage.PrefixEnd(p), nil); err != nil {
			return err
		}
	}
	return nil
}

// rebuildIndexes writes, in the indexed batch b that holds a table's
// rewritten rows, the entries of the indexes the table keeps (a table
// without a primary key keys its rows by their values, so a rewrite
// moves them) and removes those of the indexes it dropped.
func rebuildIndexes(b *pebble.Batch, a *columnChange) error {
	if err := clearIndexes(b, a.old.ID, a.droppedIndexes); err != nil {
		return err
	}
	for i := range a.d.Indexes {
		ix := &a.d.Indexes[i]
		dup, err := exec.BuildIndex(b, b, a.d, ix)
		if err != nil {
			return err
		}
		if dup != nil {
			// Rows that were apart before stay apart in the indexed
			// columns, which the change leaves as they were.
			return fmt.Errorf("unique index %s repeats a key after the rewrite", ix.Name)
		}
	}
	return nil
}
