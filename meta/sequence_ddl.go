package meta

import (
	"context"

	"streamdb/catalog"
	"streamdb/sqlerr"
)

// CREATE SEQUENCE and ALTER SEQUENCE as the frontend bound them: the
// definition (options checked, OWNED BY resolved to a table's id) is a
// catalog object that DDL stores; its values are Sequences'.

// SequenceValues is what ALTER SEQUENCE asks of the sequences' values
// (Sequences): to follow a new definition, and to restart.
type SequenceValues interface {
	Altered(ctx context.Context, d *catalog.Descriptor) error
	Set(ctx context.Context, d *catalog.Descriptor, v int64, called bool) error
}

// CreateSequence stores new sequence d. The caller holds ddlMu, under
// which it checked that the name is free; it checkpoints the change.
func (x *DDL) CreateSequence(d *catalog.Descriptor) error {
	if d.Kind != catalog.KindSequence || d.Sequence == nil {
		return sqlerr.New(sqlerr.InternalError, "CreateSequence of %s %q, which is not a sequence", d.Kind, d.Name)
	}
	return x.Create(d)
}

// SequenceAlter is an ALTER SEQUENCE as bound: the sequence, its new
// definition (nil when the statement changes none of its options) and
// whether it restarts, at RestartAt or else at its start.
type SequenceAlter struct {
	Object     *catalog.Descriptor
	Definition *catalog.Sequence
	Restart    bool
	RestartAt  *int64
}

// AlterSequence applies a: it stores the new definition, after which the
// values reserved ahead are given up so that the next reservation
// follows it, then restarts the sequence (a setval) within the bounds it
// has now. A restart outside those bounds refuses the whole statement
// before anything is stored, as PostgreSQL does. The caller holds ddlMu;
// it checkpoints the change.
func (x *DDL) AlterSequence(ctx context.Context, a SequenceAlter) error {
	d := a.Object
	q := d.Sequence
	if a.Definition != nil {
		q = a.Definition
	}
	restartAt := q.Start
	if a.RestartAt != nil {
		restartAt = *a.RestartAt
	}
	if a.Restart {
		if restartAt < q.Min {
			return sqlerr.New(sqlerr.InvalidParameterValue, "RESTART value (%d) cannot be less than MINVALUE (%d)", restartAt, q.Min)
		}
		if restartAt > q.Max {
			return sqlerr.New(sqlerr.InvalidParameterValue, "RESTART value (%d) cannot be greater than MAXVALUE (%d)", restartAt, q.Max)
		}
	}
	if a.Definition != nil {
		next := *d
		next.Sequence = a.Definition
		if err := x.Replace(d, &next); err != nil {
			return err
		}
		if err := x.cfg.Sequences.Altered(ctx, &next); err != nil {
			return err
		}
		d = &next
	}
	if !a.Restart {
		return nil
	}
	return x.cfg.Sequences.Set(ctx, d, restartAt, false)
}
