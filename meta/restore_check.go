package meta

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// A rollback replaces the whole state, and each view and table pipeline of
// the restored state then reads its sources on from the positions stored
// in that state, not from the positions a checkpoint's metadata lists
// (which name only the pipelines running when it was cut). So before
// anything is changed, every stored position of every view and table of
// the point is checked against what JetStream still holds: a point whose
// input was purged (or dropped by a stream's limits) is refused with
// 55000, never restored into views that would stop or miss input.

// restoredSource is one source position of the state a point restores.
type restoredSource struct {
	object string // the view or table that reads it
	stream string // the SQL stream or table read
	seq    uint64 // the last sequence the state holds
}

// SourcesFunc lists the streams the dataflow of view d built from root
// reads, in the order of its source indexes (the binder's, which knows
// the views it computes itself).
type SourcesFunc func(d *catalog.Descriptor, root plan.Node) ([]string, error)

// restoredSources lists every source position stored in point's state.
// A view whose plan does not decode against the point's catalog is left
// out: it fails on its own once restored, naming why.
func restoredSources(point *Point, sources SourcesFunc) []restoredSource {
	var out []restoredSource
	for _, name := range slices.Sorted(maps.Keys(point.Objs)) {
		d := point.Objs[name]
		var streams []string
		switch d.Kind {
		case catalog.KindTable:
			streams = []string{d.Name} // the table's own changelog
		case catalog.KindView:
			if len(d.Plan) == 0 {
				continue
			}
			root, err := plan.Decode(d.Plan, point.Lookup)
			if err != nil {
				continue
			}
			streams, err = sources(d, root)
			if err != nil {
				continue
			}
		default:
			continue
		}
		for i, name := range streams {
			pos, err := point.Store.Position(d.ID, uint16(i))
			if err != nil {
				continue
			}
			out = append(out, restoredSource{object: d.Name, stream: name, seq: pos.Seq})
		}
	}
	return out
}

// CheckRestoredInput fails with 55000 when JetStream no longer holds input
// that some view or table of point's state would read on from; sources
// lists a view's sources. The caller holds the catalog lock, so that no
// purge runs between the check and the restore.
func (ps *Points) CheckRestoredInput(ctx context.Context, point *Point, sources SourcesFunc) error {
	firsts := map[string]uint64{} // by subject
	for _, s := range restoredSources(point, sources) {
		src, ok := point.Objs[s.stream]
		if !ok {
			continue
		}
		first, seen := firsts[src.Subject]
		if !seen {
			js, err := ps.cfg.Broker.JS.StreamNameBySubject(ctx, src.Subject)
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				if s.seq == 0 {
					continue
				}
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot roll back: %s would read %s on from sequence %d, but no JetStream stream holds subject %q any more", s.object, s.stream, s.seq+1, src.Subject).
					WithHint("Nothing was changed. Choose a newer savepoint or checkpoint.")
			}
			if err != nil {
				return err
			}
			if first, err = ps.cfg.Broker.FirstSeq(ctx, js); err != nil {
				return err
			}
			firsts[src.Subject] = first
		}
		if first > s.seq+1 {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
				"cannot roll back: %s would read %s on from sequence %d, but JetStream holds it only from sequence %d on (messages %d..%d were purged or dropped)",
				s.object, s.stream, s.seq+1, first, s.seq+1, first-1).
				WithHint("Nothing was changed. Choose a newer savepoint or checkpoint.")
		}
	}
	return nil
}
