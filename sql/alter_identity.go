package sql

import (
	"context"
	"fmt"
	"time"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
)

// addIdentity runs ALTER TABLE t ALTER COLUMN c ADD GENERATED {ALWAYS |
// BY DEFAULT} AS IDENTITY [(options)], which pg_dump writes for every
// identity column: it makes the column's sequence (SEQUENCE NAME, else
// <table>_<column>_seq), owned by the column, and the column an identity
// column, in one catalog commit. As in PostgreSQL the column must be an
// integer NOT NULL column without a default (55000 / 42611 otherwise).
// The caller holds ddlMu.
func (e *Engine) addIdentity(ctx context.Context, t *catalog.Descriptor, act front.AlterAction) error {
	if t.Kind != catalog.KindTable {
		return sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a table", t.Name).
			WithHint("Identity columns are columns of tables.")
	}
	i := -1
	for j, c := range t.Columns {
		if c.Name == act.Column {
			i = j
		}
	}
	if i < 0 {
		return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", act.Column, t.Name)
	}
	col := t.Columns[i]
	switch {
	case col.Identity != "":
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" is already an identity column", col.Name, t.Name)
	case col.Default != "":
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" already has a default value", col.Name, t.Name).
			WithHint("Drop the default first (ALTER COLUMN ... DROP DEFAULT).")
	case col.Generated != "":
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" is a generated column", col.Name, t.Name)
	case !col.NotNull && !isKeyColumn(t, col.Name):
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" must be declared NOT NULL before identity can be added", col.Name, t.Name).
			WithHint("Run ALTER TABLE %s ALTER COLUMN %s SET NOT NULL first.", t.Name, col.Name)
	case col.Type != "smallint" && col.Type != "integer" && col.Type != "bigint":
		return sqlerr.New(sqlerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
	}
	opts := &front.SequenceOptions{}
	if act.Def.IdentityOptions != nil {
		opts = act.Def.IdentityOptions
	}
	if opts.OwnedBy != "" || opts.Restart {
		return sqlerr.New(sqlerr.SyntaxError, "an identity column's sequence options cannot say OWNED BY or RESTART")
	}
	q, err := sequenceDef(opts, col.Type)
	if err != nil {
		return err
	}
	q.OwnedByTable, q.OwnedByColumn = t.ID, col.Name
	name := opts.SequenceName
	if name == "" {
		name = catalog.ObjectName(t.Name, col.Name, "seq")
		for k := 1; e.relationExists(name); k++ {
			name = catalog.ObjectName(t.Name, col.Name, fmt.Sprintf("seq%d", k))
		}
	} else if e.relationExists(name) {
		return sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", name)
	}
	seq := &catalog.Descriptor{Name: name, Kind: catalog.KindSequence, CreatedAt: time.Now().UTC(), Sequence: q}
	next := meta.CloneDescriptor(t)
	next.Columns[i].Identity, next.Columns[i].IdentitySequence = act.Def.Identity, name
	// The catalog is reloaded with the dataflows stopped (restartWith):
	// reloading it under running ones would start the table's dataflow a
	// second time, and epochs would wait for the first one for ever.
	err = e.restartWith(func(b *meta.StateBatch) error {
		var err error
		if seq.ID, err = e.cat.NewIDIn(b); err != nil {
			return err
		}
		return e.cat.PutIn(b, seq, next)
	})
	if err != nil {
		return err
	}
	// The sequence is the table owner's, as the sequences CREATE TABLE
	// makes.
	if d, ok := e.lookup(name); ok {
		if err := e.roles.SetOwner(d, e.roles.Owner(t)); err != nil {
			return err
		}
	}
	return e.ddlCheckpoint(ctx)
}

// isKeyColumn reports whether col is in d's primary key (so NOT NULL).
func isKeyColumn(d *catalog.Descriptor, col string) bool {
	for _, k := range d.PrimaryKey {
		if k == col {
			return true
		}
	}
	return false
}
