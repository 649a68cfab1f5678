package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/sqlerr"
)

// DROP COLUMN takes with it, as PostgreSQL does, the table's own indexes
// and constraints (UNIQUE, CHECK, FOREIGN KEY) that involve the column.
// Another table's foreign key that references the column is refused
// without CASCADE (2BP01) and dropped with it, with a NOTICE.

// childKey is a foreign key of another table.
type childKey struct{ table, name string }

// dropColumnDependents records the other tables' foreign keys that
// reference column col, refused without CASCADE; the table's own
// indexes and constraints on it go with the column (meta's DropColumn).
func (a *columnChange) dropColumnDependents(ctx context.Context, col string, cascade bool) error {
	if a.New.Kind != catalog.KindTable {
		return nil
	}
	var children []childKey
	for _, t := range a.s.e.objects(catalog.KindTable) {
		if t.ID == a.New.ID {
			continue
		}
		for _, fk := range t.Constraints {
			if fk.Type == "f" && fk.RefTable == a.New.Name && slices.Contains(fk.RefColumns, col) {
				children = append(children, childKey{t.Name, fk.Name})
			}
		}
	}
	if len(children) > 0 && !cascade {
		details := make([]string, len(children))
		for i, c := range children {
			details[i] = fmt.Sprintf("constraint %s on table %s depends on column %s of table %s", c.name, c.table, col, a.New.Name)
		}
		return withDetail(sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop column %s of table %s because other objects depend on it", col, a.New.Name).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too."), "%s", strings.Join(details, "\n"))
	}
	a.foreignKeys = append(a.foreignKeys, children...)
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
