package meta

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// ALTER MATERIALIZED VIEW's state mapping (sql/alter_view.go says what
// the statement means): every stateful operator of the new plan whose
// operator id (plan.NodeIDs over the streaming plan) and state format
// (exec.StateFormat) match one of the old plan's keeps that operator's
// state tables; rows no operator keeps, and operators without a match,
// need their input read again, so the whole view is backfilled when
// JetStream still holds its history; otherwise the ALTER is refused
// unless allow_non_restored_state lets those operators start empty.

// What happens to one stateful operator of the new plan.
const (
	FateKept       = "kept"
	FateBackfilled = "backfilled"
	FateEmpty      = "empty"
	FateRefused    = "not restorable"
)

// AlterOp is one stateful operator of the new plan and its fate.
type AlterOp struct {
	ID, Describe, Fate string
	node               plan.Node
	indexes            []uint16 // kept: the old state tables
	Reemit             bool
	// Rows marks the view's rows that no operator keeps (node is nil):
	// they are restored only by reading their inputs again.
	Rows bool
}

// ViewAlter is what an ALTER of view Old to View, bound to Root, would
// do (PlanAlter).
type ViewAlter struct {
	Old, View *catalog.Descriptor
	Root      plan.Node
	Ops       []AlterOp
	Rebuild   bool   // backfill the whole view from JetStream
	why       string // why operators cannot be restored, when some cannot
	layout    *exec.ViewLayout
	// slots are the stateful operators of the new dataflow, as the
	// builder will take their state tables (exec.StateSlots).
	slots []exec.StateSlot
}

func (a *ViewAlter) refused() []AlterOp {
	var out []AlterOp
	for _, op := range a.Ops {
		if op.Fate == FateRefused {
			out = append(out, op)
		}
	}
	return out
}

// PlanAlter maps the state of running view old onto view d, its new
// descriptor (with old's id, format and plan record) bound to root: which
// operators keep their state, whether the whole view is backfilled, and
// which would start empty, which allow permits. The caller holds ddlMu.
func (x *DDL) PlanAlter(ctx context.Context, old, d *catalog.Descriptor, root plan.Node, allow bool) (*ViewAlter, error) {
	layout, ok := x.cfg.Runtime.Layout(old.ID)
	if !ok {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s is not running, so its state cannot be carried over", old.Name).
			WithHint("DROP and CREATE the materialized view instead.")
	}
	a, err := mapViewState(old, d, root, layout)
	if err != nil {
		return nil, err
	}
	ups, err := x.upstreamPlans(d, root)
	if err != nil {
		return nil, err
	}
	if a.slots, err = exec.StateSlots(d, root, ups); err != nil {
		return nil, err
	}
	missing := len(a.refused()) > 0
	sources, err := x.SourceStreams(d, root)
	if err != nil {
		return nil, err
	}
	sourcesChanged := strings.Join(sources, "\x00") != strings.Join(layout.Sources, "\x00")
	if !missing && !sourcesChanged {
		return a, nil
	}
	why, err := x.historyGone(ctx, d, root, sources)
	if err != nil {
		return nil, err
	}
	switch {
	case why == "":
		a.Rebuild = true
		for i := range a.Ops {
			a.Ops[i].Fate, a.Ops[i].indexes, a.Ops[i].Reemit = FateBackfilled, nil, false
		}
	case sourcesChanged:
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s would read other streams than it does (%s, not %s), and %s",
			old.Name, strings.Join(sources, ", "), strings.Join(layout.Sources, ", "), why).
			WithHint("Keep the streams the view reads, or DROP and CREATE the materialized view.")
	default:
		a.why = why
		if allow {
			for i := range a.Ops {
				if a.Ops[i].Fate == FateRefused {
					a.Ops[i].Fate = FateEmpty
				}
			}
		}
	}
	return a, nil
}

// mapViewState matches the stateful operators of d's streaming plan with
// those of the running dataflow's layout by id and state format: a match
// is kept (one new operator per old one), any other is refused for now,
// as are the rows of inputs no operator keeps.
func mapViewState(old, d *catalog.Descriptor, root plan.Node, layout *exec.ViewLayout) (*ViewAlter, error) {
	if _, err := plan.NodeIDs(layout.Root); err != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the operators of %s have no ids to match (%v)", old.Name, err).
			WithHint("DROP and CREATE the materialized view instead.")
	}
	type oldSlot struct {
		format  string
		indexes []uint16
	}
	byID := map[string]oldSlot{}
	for _, s := range layout.Slots {
		byID[s.ID] = oldSlot{format: exec.StateFormat(layout.Dataflow, s.Node), indexes: s.Indexes}
	}
	stream := plan.RewriteStreaming(root, d.Dataflow, nil)
	newIDs, err := plan.NodeIDs(stream)
	if err != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the new query's operators have no ids (%v)", err)
	}
	a := &ViewAlter{Old: old, View: d, Root: root, layout: layout}
	for _, node := range plan.StatefulNodes(stream) {
		op := AlterOp{ID: newIDs[node], Describe: node.Describe(), node: node}
		slot, found := byID[op.ID]
		op.Reemit = plan.ReemitNeeded(stream, node)
		switch {
		case found && slot.format == exec.StateFormat(d.Dataflow, node) && (!op.Reemit || exec.CanReemit(node)):
			op.Fate, op.indexes = FateKept, slot.indexes
			delete(byID, op.ID) // one new operator per old one
		default:
			op.Fate = FateRefused
		}
		a.Ops = append(a.Ops, op)
	}
	if names := plan.UnkeptSources(stream); len(names) > 0 {
		a.Ops = append(a.Ops, AlterOp{ID: "rows", Rows: true, Fate: FateRefused,
			Describe: "the rows from " + strings.Join(names, ", ") + " that no operator keeps"})
	}
	return a, nil
}

// historyGone says why the view's input cannot be read again from its
// start ("" when it can): a stream whose JetStream stream discarded
// messages, or a view of a format before edges that reads another view.
// Views and tables read through edges send their rows again (exec's
// alter marker, Reread), as they do to a view created now.
func (x *DDL) historyGone(ctx context.Context, d *catalog.Descriptor, root plan.Node, sources []string) (string, error) {
	if d.Dataflow < catalog.DataflowViewEdges {
		for _, src := range plan.Sources(root) {
			if src.Kind == catalog.KindView {
				return fmt.Sprintf("it reads %s %s through its changes, which cannot be read again", src.Kind, src.Name), nil
			}
		}
	}
	for _, name := range sources {
		src, ok := x.cfg.Live.Lookup(name)
		if !ok {
			continue
		}
		first, err := x.cfg.Streams.First(ctx, src)
		if err != nil {
			return "", sqlerr.New(sqlerr.InternalError, "read JetStream stream %s: %v", src.JSStream, err)
		}
		if first > src.StartSeq+1 {
			return fmt.Sprintf("JetStream stream %s no longer holds the history of %s (it starts at sequence %d)", src.JSStream, name, first), nil
		}
	}
	return "", nil
}

// Refusal is the error of an ALTER whose operators cannot be restored,
// nil when they all can.
func (a *ViewAlter) Refusal() error {
	ops := a.refused()
	if len(ops) == 0 {
		return nil
	}
	var names []string
	var parts []string
	for _, op := range ops {
		if op.Rows {
			parts = append(parts, op.Describe+" would have to be read again")
			continue
		}
		names = append(names, fmt.Sprintf("%s (%s)", op.ID, op.Describe))
	}
	if len(names) > 0 {
		parts = append([]string{"the state of operator " + strings.Join(names, ", ") + " cannot be restored: no operator of the old plan matches"}, parts...)
	}
	return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot alter materialized view %s: %s, and %s",
		a.Old.Name, strings.Join(parts, "; "), a.why).
		WithHint("Keep those operators unchanged (or name them WITH (uids = '...')), or let them start empty WITH (allow_non_restored_state = true).")
}

// Explain renders what the ALTER would do, one operator a line (EXPLAIN
// ALTER MATERIALIZED VIEW).
func (a *ViewAlter) Explain() []string {
	mode := "the view keeps the state of matching operators"
	if a.Rebuild {
		mode = "the whole view is backfilled (streams from JetStream, tables and views from their rows)"
	}
	lines := []string{"ALTER MATERIALIZED VIEW " + a.Old.Name + ": " + mode}
	for _, op := range a.Ops {
		fate := op.Fate
		if op.Fate == FateKept && op.Reemit {
			fate += ", output re-sent"
		}
		lines = append(lines, fmt.Sprintf("  %s  %s: %s", op.ID, op.Describe, fate))
	}
	if len(a.Ops) == 0 {
		lines = append(lines, "  (no stateful operators)")
	}
	if err := a.Refusal(); err != nil {
		lines = append(lines, "refused: "+sqlerr.From(err).Message)
	}
	return lines
}

// stateTables works out the new view's state layout (OpState, by
// operator id in the order the builder takes them: the kept operators'
// old tables, new tables from NextOp for the others, and NextOp past
// them), the old tables no kept operator uses (drop, in order) and the
// kept tables whose operators send their output again (reemit). A
// rebuilt view keeps no table: its layout is numbered afresh.
func (a *ViewAlter) stateTables() (drop, reemit []uint16) {
	d := a.View
	kept := map[uint16]bool{}
	keptByID := map[string][]uint16{}
	if !a.Rebuild {
		for _, op := range a.Ops {
			if op.Fate != FateKept {
				continue
			}
			keptByID[op.ID] = op.indexes
			for _, i := range op.indexes {
				kept[i] = true
			}
			if op.Reemit {
				reemit = append(reemit, op.indexes...)
			}
		}
	}
	d.OpState, d.NextOp = map[string][]uint16{}, max(a.layout.NextOp, a.Old.NextOp)
	if a.Rebuild {
		d.NextOp = 0 // every old table is dropped
	}
	next := max(d.NextOp, exec.FirstOperatorIndex)
	for _, s := range a.slots {
		if list := keptByID[s.ID]; len(list) >= s.Tables {
			d.OpState[s.ID] = append(d.OpState[s.ID], list[:s.Tables]...)
			keptByID[s.ID] = list[s.Tables:]
			continue
		}
		for range s.Tables {
			d.OpState[s.ID] = append(d.OpState[s.ID], next)
			next++
		}
	}
	d.NextOp = next
	if len(d.OpState) == 0 {
		d.OpState = nil
	}
	for _, s := range a.layout.Slots {
		for _, i := range s.Indexes {
			if !kept[i] {
				drop = append(drop, i)
			}
		}
	}
	sort.Slice(drop, func(i, j int) bool { return drop[i] < drop[j] })
	return drop, reemit
}

// SwapView writes the altered view and its state and restarts every
// dataflow from the committed epoch, as a rollback does: queries wait
// (it takes stateMu) and checkpoints pause (the coordinator's Exclusive)
// while it runs. A rebuilt view is marked populating and starts its
// sources where a new view would. The caller holds ddlMu and has taken
// the savepoint that undoes the ALTER.
func (x *DDL) SwapView(ctx context.Context, a *ViewAlter) error {
	d := a.View
	var starts map[uint16]uint64
	if a.Rebuild {
		bf, err := x.planBackfill(ctx, d, a.Root)
		if err != nil {
			return err
		}
		markPopulating(d, bf)
		if starts, err = x.SourceStarts(ctx, d, a.Root); err != nil {
			return err
		}
	}
	drop, reemit := a.stateTables()

	x.cfg.StateMu.Lock()
	defer x.cfg.StateMu.Unlock()
	err := x.cfg.Coord.Exclusive(func() error {
		x.cfg.Runtime.StopAll()
		x.cfg.ResetTables()
		err := x.cfg.State.RewriteView(x.cfg.Catalog, ViewRewrite{
			View: d, OldID: a.Old.ID, OldColumns: len(a.Old.Columns), OldIndexes: a.Old.Indexes,
			Drop: drop, Reemit: reemit, Rebuild: a.Rebuild, Starts: starts,
		})
		if err != nil {
			return err
		}
		defer x.cfg.Runtime.StartDeferred()
		return x.cfg.Reload()
	})
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "ALTER MATERIALIZED VIEW %s failed: %v", d.Name, err).
			WithHint("ROLLBACK TO SAVEPOINT restores the view as it was.")
	}
	return nil
}
