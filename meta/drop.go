package meta

import "streamdb/catalog"

// DropPlan is what a DROP of one object removes, as the frontend
// resolved and checked it: the object, what reads it (dependents first),
// the sinks on any of them, and the sequences owned by the object (a
// table's serial and identity columns, and those OWNED BY it).
type DropPlan struct {
	Object     *catalog.Descriptor
	Dependents []*catalog.Descriptor
	Sinks      []*SinkDescriptor
	Owned      []*catalog.Descriptor
}

// DropCascade removes p: the sinks with their outboxes, the dependents,
// the object and its sequences, in that order. A table's JetStream
// stream is noted for collection once no retained checkpoint or
// savepoint can bring the table back (DroppedStreams); under
// delete_on_cancellation the checkpoints holding the dropped objects go
// with them. The caller holds ddlMu; it checkpoints the change
// (Checkpoint) once every object of its statement is dropped.
func (x *DDL) DropCascade(p DropPlan) error {
	for _, s := range p.Sinks {
		if err := x.cfg.Sinks.Delete(s); err != nil {
			return err
		}
	}
	for _, dep := range p.Dependents {
		if err := x.Drop(dep); err != nil {
			return err
		}
	}
	d := p.Object
	if err := x.Drop(d); err != nil {
		return err
	}
	for _, q := range p.Owned {
		if err := x.Drop(q); err != nil {
			return err
		}
	}
	if d.Kind == catalog.KindTable && d.Envelope() == "" {
		x.cfg.Dropped.Note(d.JSStream, d.Subject)
	}
	if !x.cfg.Node.CheckpointSettings().RetainOnCancellation {
		x.cfg.Coord.DeleteAll()
	}
	return nil
}
