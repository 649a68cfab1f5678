package meta

import (
	"context"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// RecordPlan stores in d the plan record of root, the plan view d is
// created with (plan.Encode), so that every later start builds its
// dataflow from that plan and not from its SQL bound again: operator
// state stays with the operators it belongs to whatever the binder of a
// later release makes of the SQL. A plan that cannot be recorded (an
// expression the record cannot rebuild) leaves d without one, logged: the
// view is then bound from its SQL at each start, as views created before
// plan records are.
func (x *DDL) RecordPlan(d *catalog.Descriptor, root plan.Node) {
	data, err := plan.Encode(root, x.cfg.Live.Lookup)
	if err != nil {
		x.cfg.Log.Warn("the plan of the materialized view is not recorded; it is bound from its SQL at each start", "view", d.Name, "err", err)
		return
	}
	d.Plan = data
}

// ViewPlan is the plan view d's dataflow is built from: its plan record,
// or, for a view created without one, its SQL bound again (ViewPlan).
func (x *DDL) ViewPlan(d *catalog.Descriptor) (plan.Node, error) {
	return ViewPlan(d, x.cfg.Live.Lookup, x.cfg.Bind)
}

// upstreamPlans binds, for the dataflow of view d built from root, the
// plan of every view it computes itself (exec.ExpandsView): once per scan,
// and down through those plans.
func (x *DDL) upstreamPlans(d *catalog.Descriptor, root plan.Node) (exec.UpstreamPlans, error) {
	return UpstreamPlans(d, root, x.ViewPlan)
}

// StartView starts the dataflow of view (or table) d built from root.
func (x *DDL) StartView(d *catalog.Descriptor, root plan.Node) error {
	ups, err := x.upstreamPlans(d, root)
	if err != nil {
		return err
	}
	return x.cfg.Runtime.StartView(d, root, ups)
}

// SourceStreams lists the streams the dataflow of view d built from root
// reads, in the order of its source indexes.
func (x *DDL) SourceStreams(d *catalog.Descriptor, root plan.Node) ([]string, error) {
	ups, err := x.upstreamPlans(d, root)
	if err != nil {
		return nil, err
	}
	return exec.SourceStreams(d, root, ups), nil
}

// InitPositions starts a new view's sources at the oldest message each
// JetStream stream still retains, recording the position before it. So a
// position is never 0 while earlier input is gone, and a later restart or
// rollback can tell input that vanished after the view started reading.
func (x *DDL) InitPositions(ctx context.Context, d *catalog.Descriptor, root plan.Node) error {
	starts, err := x.SourceStarts(ctx, d, root)
	if err != nil {
		return err
	}
	return x.cfg.State.StartPositions(d.ID, starts)
}

// SourceStarts are the positions a new (or backfilled) view starts its
// sources at, by source index (see InitPositions); a source starting at
// the beginning (0) is left out.
func (x *DDL) SourceStarts(ctx context.Context, d *catalog.Descriptor, root plan.Node) (map[uint16]uint64, error) {
	streams, err := x.SourceStreams(d, root)
	if err != nil {
		return nil, err
	}
	out := map[uint16]uint64{}
	for i, name := range streams {
		src, ok := x.cfg.Live.Lookup(name)
		if !ok {
			continue
		}
		before, err := x.SourceStart(ctx, src)
		if err != nil {
			return nil, err
		}
		if before > 0 {
			out[uint16(i)] = before
		}
	}
	return out, nil
}

// SourceStart is the position a new view starts a source at: the
// sequence before the oldest message JetStream still retains, or, for a
// table's changelog, before its first message (after StartSeq).
func (x *DDL) SourceStart(ctx context.Context, src *catalog.Descriptor) (uint64, error) {
	first, err := x.cfg.Streams.First(ctx, src)
	if err != nil {
		return 0, sqlerr.New(sqlerr.InternalError, "read JetStream stream %s: %v", src.JSStream, err)
	}
	return max(first, src.StartSeq+1) - 1, nil
}
