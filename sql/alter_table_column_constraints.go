package sql

import (
	"context"
	"slices"

	"streamdb/front"
)

// alterTableAndConstraints runs ALTER TABLE's column actions, then adds
// the constraints written on the columns ADD COLUMN added (UNIQUE, CHECK,
// REFERENCES: Django adds a ForeignKey field as ADD COLUMN ... CONSTRAINT
// name REFERENCES t(id) DEFERRABLE INITIALLY DEFERRED) as ADD CONSTRAINT
// does. If one of them fails, the columns added are dropped again and the
// error is returned, so the statement changes nothing, as in PostgreSQL.
func (s *session) alterTableAndConstraints(ctx context.Context, n *front.AlterTable) (string, error) {
	var before []string
	if d, ok := s.e.lookup(n.Table); ok {
		for _, c := range d.Columns {
			before = append(before, c.Name)
		}
	}
	tag, err := s.alterTable(ctx, n)
	if err != nil {
		return "", err
	}
	var added []string
	var defs []front.ConstraintDef
	for _, act := range n.Actions {
		if act.Kind != front.AlterAddColumn || slices.Contains(before, act.Def.Name) || len(act.Def.Constraints) == 0 {
			continue
		}
		added = append(added, act.Def.Name)
		defs = append(defs, act.Def.Constraints...)
	}
	for i := range defs {
		def := defs[i]
		if _, err := s.alterConstraint(ctx, &front.AlterTableConstraint{Schema: n.Schema, Table: n.Table, Add: &def}); err != nil {
			undo := &front.AlterTable{Schema: n.Schema, Table: n.Table, Stream: n.Stream}
			for _, name := range added {
				undo.Actions = append(undo.Actions, front.AlterAction{Kind: front.AlterDropColumn, Column: name, IfExists: true, Cascade: true})
			}
			if d, ok := s.e.lookup(n.Table); ok {
				for _, c := range d.Constraints {
					if c.Type != "" && slices.ContainsFunc(c.Columns, func(col string) bool { return slices.Contains(added, col) }) {
						_, _ = s.alterConstraint(ctx, &front.AlterTableConstraint{Schema: n.Schema, Table: n.Table, Drop: c.Name, DropIfExists: true})
					}
				}
			}
			if _, uerr := s.alterTable(ctx, undo); uerr != nil {
				s.e.log.Warn("dropping the columns of a failed ADD COLUMN", "table", n.Table, "err", uerr)
			}
			return "", err
		}
	}
	return tag, nil
}
