package sql

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// ALTER MATERIALIZED VIEW name [WITH (...)] AS query (and CREATE OR
// REPLACE MATERIALIZED VIEW of an existing view) replaces a view's query
// while keeping operator state, as a Flink job restarted from a savepoint
// with a changed program:
//
//   - Every stateful operator of the new plan whose operator id (plan
//     NodeIDs over the streaming plan) and state format (exec.StateFormat)
//     match one of the old plan keeps that operator's state tables.
//   - Rows that reach the view through stateless operators only (a
//     projection or filter of a stream or table) are held by no operator
//     but the view's table, which the swap empties: they need their
//     input read again, as an operator without a match does.
//   - If some operator has no match (or the view's sources change), the
//     whole view is backfilled from JetStream when JetStream still holds
//     the whole history of its streams (operators kept would compute the
//     same state again); views and tables it reads through their changes
//     send their rows again, as to a view created now.
//   - Otherwise the ALTER is refused (55000) naming those operators,
//     unless WITH (allow_non_restored_state = true) lets them start empty.
//
// The swap happens while the dataflows stop at an epoch boundary (as
// ROLLBACK TO SAVEPOINT does); views reading the altered one see its old
// rows retracted and its new ones inserted (exec/alter.go). A savepoint is
// taken first, named in a NOTICE, so ROLLBACK TO SAVEPOINT undoes it.

// allowNonRestoredOption lets ALTER start operators empty whose state
// cannot be restored or backfilled (Flink's --allowNonRestoredState).
const allowNonRestoredOption = "allow_non_restored_state"

// What happens to one stateful operator of the new plan.
const (
	fateKept       = "kept"
	fateBackfilled = "backfilled"
	fateEmpty      = "empty"
	fateRefused    = "not restorable"
)

type alterOp struct {
	id, describe, fate string
	node               plan.Node
	indexes            []uint16 // kept: the old state tables
	reemit             bool
	// rows marks the view's rows that no operator keeps (node is nil):
	// they are restored only by reading their inputs again.
	rows bool
}

// alterPlan is what an ALTER of view old to root would do.
type alterPlan struct {
	old, d  *catalog.Descriptor
	root    plan.Node
	ops     []alterOp
	rebuild bool   // backfill the whole view from JetStream
	why     string // why operators cannot be restored, when some cannot
	layout  *exec.ViewLayout
}

func (a *alterPlan) refused() []alterOp {
	var out []alterOp
	for _, op := range a.ops {
		if op.fate == fateRefused {
			out = append(out, op)
		}
	}
	return out
}

// planAlter works out an ALTER of existing view old to query n, which
// bind binds. The caller holds ddlMu.
func (e *Engine) planAlter(ctx context.Context, old *catalog.Descriptor, n *front.CreateMaterializedView, st *front.Statement, bind func() (plan.Node, error)) (*alterPlan, error) {
	if old.Kind == catalog.KindUnpopulatedView {
		return nil, notPopulated(old.Name)
	}
	if old.Kind != catalog.KindView {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is not a materialized view", n.Name)
	}
	if len(n.Columns) > 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CREATE OR REPLACE MATERIALIZED VIEW of an existing view takes no column names").
			WithHint("Name the columns in the query with AS.")
	}
	opts, err := checkViewOptions(n.Options)
	if err != nil {
		return nil, err
	}
	allow := isTrueOption(n.Options[allowNonRestoredOption])
	root, err := bind()
	if err != nil {
		return nil, err
	}
	if err := checkStreamable(root); err != nil {
		return nil, err
	}
	d, err := viewDescriptor(n, root, opts)
	if err != nil {
		return nil, err
	}
	d.DependsOn = e.plainViewsNamed(d.DependsOn, st, n.Query)
	if containsString(d.DependsOn, old.Name) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "materialized view %s cannot read itself", old.Name)
	}
	// The view keeps its id (its state, positions and readers' edges) and
	// its format (the state kept is encoded by it).
	d.ID, d.Dataflow, d.CreatedAt = old.ID, old.Dataflow, old.CreatedAt
	d.Options = mergeViewOptions(old.Options, opts)
	e.recordPlan(d, root)
	if len(d.Plan) == 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the new query of %s cannot be recorded as a plan, so its operators have no ids to match", old.Name).
			WithHint("DROP and CREATE the materialized view instead.")
	}
	if deps := e.dependents(old.Name); len(deps) > 0 && !sameViewColumns(old.Columns, d.Columns) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "materialized view %s is read by %s: its columns cannot change", old.Name, deps[0].Name).
			WithHint("Keep the column names and types of %s, or drop the views that read it first.", old.Name)
	}
	layout, ok := e.rt.Layout(old.ID)
	if !ok {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s is not running, so its state cannot be carried over", old.Name).
			WithHint("DROP and CREATE the materialized view instead.")
	}
	oldIDs, err := plan.NodeIDs(layout.Root)
	if err != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the operators of %s have no ids to match (%v)", old.Name, err).
			WithHint("DROP and CREATE the materialized view instead.")
	}
	type oldSlot struct {
		format  string
		indexes []uint16
	}
	byID := map[string]oldSlot{}
	for _, s := range layout.Slots {
		byID[oldIDs[s.Node]] = oldSlot{format: exec.StateFormat(layout.Dataflow, s.Node), indexes: s.Indexes}
	}
	stream := plan.RewriteStreaming(root, d.Dataflow, nil)
	newIDs, err := plan.NodeIDs(stream)
	if err != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the new query's operators have no ids (%v)", err)
	}
	a := &alterPlan{old: old, d: d, root: root, layout: layout}
	missing := false
	for _, node := range plan.StatefulNodes(stream) {
		op := alterOp{id: newIDs[node], describe: node.Describe(), node: node}
		slot, found := byID[op.id]
		op.reemit = plan.ReemitNeeded(stream, node)
		switch {
		case found && slot.format == exec.StateFormat(d.Dataflow, node) && (!op.reemit || exec.CanReemit(node)):
			op.fate, op.indexes = fateKept, slot.indexes
			delete(byID, op.id) // one new operator per old one
		default:
			op.fate = fateRefused
			missing = true
		}
		a.ops = append(a.ops, op)
	}
	if names := plan.UnkeptSources(stream); len(names) > 0 {
		a.ops = append(a.ops, alterOp{id: "rows", rows: true, fate: fateRefused,
			describe: "the rows from " + strings.Join(names, ", ") + " that no operator keeps"})
		missing = true
	}
	sources, err := e.sourceStreams(d, root)
	if err != nil {
		return nil, err
	}
	sourcesChanged := strings.Join(sources, "\x00") != strings.Join(layout.Sources, "\x00")
	if !missing && !sourcesChanged {
		return a, nil
	}
	why, err := e.historyGone(ctx, d, root, sources)
	if err != nil {
		return nil, err
	}
	switch {
	case why == "":
		a.rebuild = true
		for i := range a.ops {
			a.ops[i].fate, a.ops[i].indexes, a.ops[i].reemit = fateBackfilled, nil, false
		}
	case sourcesChanged:
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s would read other streams than it does (%s, not %s), and %s",
			old.Name, strings.Join(sources, ", "), strings.Join(layout.Sources, ", "), why).
			WithHint("Keep the streams the view reads, or DROP and CREATE the materialized view.")
	default:
		a.why = why
		if allow {
			for i := range a.ops {
				if a.ops[i].fate == fateRefused {
					a.ops[i].fate = fateEmpty
				}
			}
		}
	}
	return a, nil
}

// historyGone says why the view's input cannot be read again from its
// start ("" when it can): a stream whose JetStream stream discarded
// messages, or a view of a format before edges that reads another view.
// Views and tables read through edges send their rows again (exec's
// alter marker, Reread), as they do to a view created now.
func (e *Engine) historyGone(ctx context.Context, d *catalog.Descriptor, root plan.Node, sources []string) (string, error) {
	if d.Dataflow < catalog.DataflowViewEdges {
		for _, src := range plan.Sources(root) {
			if src.Kind == catalog.KindView {
				return fmt.Sprintf("it reads %s %s through its changes, which cannot be read again", src.Kind, src.Name), nil
			}
		}
	}
	for _, name := range sources {
		src, ok := e.lookup(name)
		if !ok {
			continue
		}
		first, err := e.streams.First(ctx, src)
		if err != nil {
			return "", sqlerr.New(sqlerr.InternalError, "read JetStream stream %s: %v", src.JSStream, err)
		}
		if first > src.StartSeq+1 {
			return fmt.Sprintf("JetStream stream %s no longer holds the history of %s (it starts at sequence %d)", src.JSStream, name, first), nil
		}
	}
	return "", nil
}

// refusal is the error of an ALTER whose operators cannot be restored.
func (a *alterPlan) refusal() error {
	ops := a.refused()
	if len(ops) == 0 {
		return nil
	}
	var names []string
	var parts []string
	for _, op := range ops {
		if op.rows {
			parts = append(parts, op.describe+" would have to be read again")
			continue
		}
		names = append(names, fmt.Sprintf("%s (%s)", op.id, op.describe))
	}
	if len(names) > 0 {
		parts = append([]string{"the state of operator " + strings.Join(names, ", ") + " cannot be restored: no operator of the old plan matches"}, parts...)
	}
	return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot alter materialized view %s: %s, and %s",
		a.old.Name, strings.Join(parts, "; "), a.why).
		WithHint("Keep those operators unchanged (or name them WITH (uids = '...')), or let them start empty WITH (allow_non_restored_state = true).")
}

// explain renders what the ALTER would do, one operator a line.
func (a *alterPlan) explain() []string {
	mode := "the view keeps the state of matching operators"
	if a.rebuild {
		mode = "the whole view is backfilled (streams from JetStream, tables and views from their rows)"
	}
	lines := []string{"ALTER MATERIALIZED VIEW " + a.old.Name + ": " + mode}
	for _, op := range a.ops {
		fate := op.fate
		if op.fate == fateKept && op.reemit {
			fate += ", output re-sent"
		}
		lines = append(lines, fmt.Sprintf("  %s  %s: %s", op.id, op.describe, fate))
	}
	if len(a.ops) == 0 {
		lines = append(lines, "  (no stateful operators)")
	}
	if err := a.refusal(); err != nil {
		lines = append(lines, "refused: "+sqlerr.From(err).Message)
	}
	return lines
}

// alterView runs ALTER MATERIALIZED VIEW (or CREATE OR REPLACE of an
// existing view); bind binds the new query, under ddlMu.
func (e *Engine) alterView(ctx context.Context, n *front.CreateMaterializedView, st *front.Statement, bind func() (plan.Node, error)) (string, error) {
	tag := "ALTER MATERIALIZED VIEW"
	if n.Replace {
		tag = "CREATE MATERIALIZED VIEW"
	}
	old, a, err := e.planAlterView(ctx, n, st, bind)
	if err != nil {
		return "", err
	}
	// The savepoint comes first, while nothing has changed.
	point := alterSavepointName(old.Name, time.Now())
	if _, err := e.coord.TakeSavepoint(ctx, point); err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "the savepoint before ALTER failed, nothing was changed: %v", err)
	}
	pgwire.Notice(ctx, fmt.Sprintf("savepoint %s holds the state before this change; ROLLBACK TO SAVEPOINT %s undoes it", point, point), "")
	if err := e.swapAlteredView(ctx, n, old, a); err != nil {
		return "", err
	}
	d := a.d
	e.log.Info("altered materialized view", "view", d.Name, "savepoint", point, "backfill", a.rebuild)
	if err := e.ddlCheckpoint(ctx); err != nil {
		return "", err
	}
	if e.rt.Paused() {
		return tag, nil
	}
	targets, err := e.rt.Targets(ctx, []uint32{d.ID})
	if err != nil {
		return "", err
	}
	if err := e.waitLogged(ctx, []uint32{d.ID}, targets, "ALTER of "+d.Name); err != nil {
		return "", err
	}
	if cur, ok := e.lookup(d.Name); ok {
		e.finishPopulating(cur)
	}
	return tag, nil
}

// planAlterView plans ALTER of view n.Name under ddlMu: the view as it is
// and the plan that changes it, or the reason it cannot be changed.
func (e *Engine) planAlterView(ctx context.Context, n *front.CreateMaterializedView, st *front.Statement, bind func() (plan.Node, error)) (*catalog.Descriptor, *alterPlan, error) {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	old, ok := e.lookup(n.Name)
	if !ok {
		return nil, nil, sqlerr.New(sqlerr.UndefinedTable, "materialized view %q does not exist", n.Name)
	}
	if sinks, err := e.sinksOn([]*catalog.Descriptor{old}); err != nil || len(sinks) > 0 {
		if err != nil {
			return nil, nil, err
		}
		// A sink's pending outbox entries and its consumers hold rows of
		// the view's current columns.
		return nil, nil, sqlerr.New(sqlerr.DependentObjectsExist, "cannot change materialized view %s because sink %s reads it", n.Name, sinks[0].Name).
			WithHint("DROP SINK %s first, change the view, then CREATE SINK again (its consumers then get the new view's rows as a new snapshot).", sinks[0].Name)
	}
	a, err := e.planAlter(ctx, old, n, st, bind)
	if err == nil {
		err = a.refusal()
	}
	if err != nil {
		return nil, nil, err
	}
	return old, a, nil
}

// swapAlteredView applies plan a under ddlMu, unless view old changed
// since it was planned.
func (e *Engine) swapAlteredView(ctx context.Context, n *front.CreateMaterializedView, old *catalog.Descriptor, a *alterPlan) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if cur, ok := e.lookup(n.Name); !ok || cur != old {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s changed during ALTER; nothing was changed", n.Name).WithHint("Run the ALTER again.")
	}
	return e.swapView(ctx, a)
}

// swapView writes the altered view and its state and restarts every
// dataflow from the committed epoch, as a rollback does: queries wait
// (stateMu) and checkpoints pause while it runs. The caller holds ddlMu.
func (e *Engine) swapView(ctx context.Context, a *alterPlan) error {
	d := a.d
	var bf *backfill
	var starts map[uint16]uint64
	if a.rebuild {
		var err error
		if bf, err = e.planBackfill(ctx, d, a.root); err != nil {
			return err
		}
		markPopulating(d, bf)
		if starts, err = e.sourceStarts(ctx, d, a.root); err != nil {
			return err
		}
	}
	kept := map[uint16]bool{}
	var reemit []uint16
	if !a.rebuild {
		d.OpState = map[string][]uint16{}
		next := max(a.layout.NextOp, a.old.NextOp)
		for _, op := range a.ops {
			if op.rows {
				continue // no state table: the view's own
			}
			if op.fate == fateKept {
				d.OpState[op.id] = op.indexes
				for _, i := range op.indexes {
					kept[i] = true
				}
				if op.reemit {
					reemit = append(reemit, op.indexes...)
				}
				continue
			}
			// A join takes one table, as every operator does today;
			// the builder numbers any further table from NextOp.
			d.OpState[op.id] = []uint16{next}
			next++
		}
		d.NextOp = next
	}
	var drop []uint16
	for _, s := range a.layout.Slots {
		for _, i := range s.Indexes {
			if !kept[i] {
				drop = append(drop, i)
			}
		}
	}
	sort.Slice(drop, func(i, j int) bool { return drop[i] < drop[j] })
	droppedIndexes, err := carriedIndexes(a.old, d)
	if err != nil {
		return err
	}

	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	err = e.coord.Exclusive(func() error {
		e.rt.StopAll()
		e.tables.reset()
		err := e.state.RewriteView(e.cat, meta.ViewRewrite{
			View: d, OldID: a.old.ID, OldColumns: len(a.old.Columns), OldIndexes: a.old.Indexes,
			Drop: drop, Reemit: reemit, Rebuild: a.rebuild, Starts: starts,
		})
		if err != nil {
			return err
		}
		defer e.rt.StartDeferred()
		return e.loadCatalog()
	})
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "ALTER MATERIALIZED VIEW %s failed: %v", d.Name, err).
			WithHint("ROLLBACK TO SAVEPOINT restores the view as it was.")
	}
	noticeDroppedIndexes(ctx, d.Name, droppedIndexes)
	return nil
}

// sourceStarts are the positions a backfilled view starts its sources at
// (see initPositions).
func (e *Engine) sourceStarts(ctx context.Context, d *catalog.Descriptor, root plan.Node) (map[uint16]uint64, error) {
	streams, err := e.sourceStreams(d, root)
	if err != nil {
		return nil, err
	}
	out := map[uint16]uint64{}
	for i, name := range streams {
		src, ok := e.lookup(name)
		if !ok {
			continue
		}
		before, err := e.sourceStart(ctx, src)
		if err != nil {
			return nil, err
		}
		if before > 0 {
			out[uint16(i)] = before
		}
	}
	return out, nil
}

// explainAlter shows, per operator of the new plan, whether ALTER would
// keep, backfill or empty its state.
func (e *Engine) explainAlter(ctx context.Context, n *front.CreateMaterializedView, st *front.Statement) ([]string, error) {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	old, ok := e.lookup(n.Name)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "materialized view %q does not exist", n.Name)
	}
	a, err := e.planAlter(ctx, old, n, st, func() (plan.Node, error) { return e.bindView(st, n) })
	if err != nil {
		return nil, err
	}
	return a.explain(), nil
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// alterSavepointName names the savepoint an ALTER of view takes: a plain
// lower-case identifier, so that the ROLLBACK TO SAVEPOINT the NOTICE
// suggests parses as written, without quotes.
func alterSavepointName(view string, at time.Time) string {
	name := notIdent.ReplaceAllString(strings.ToLower(view), "_")
	// 13 + 27 + 1 + 22 bytes: within checkpoint.MaxSavepointNameLen.
	if len(name) > 27 {
		name = name[:27]
	}
	at = at.UTC()
	return fmt.Sprintf("before_alter_%s_%s_%06d", name, at.Format("20060102_150405"), at.Nanosecond()/1000)
}

// mergeViewOptions keeps the old view's options that the ALTER does not
// set again (on_error), drops its populating flag, and takes the new ones.
func mergeViewOptions(old, set map[string]string) map[string]string {
	out := maps.Clone(old)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, populatingOption)
	delete(out, uidsOption) // names belong to the query they were given with
	maps.Copy(out, set)
	if len(out) == 0 {
		return nil
	}
	return out
}

func sameViewColumns(a, b []catalog.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}

func isTrueOption(v string) bool {
	switch strings.ToLower(v) {
	case "true", "on", "1", "yes":
		return true
	}
	return false
}

// explainAlter is EXPLAIN ALTER MATERIALIZED VIEW (or EXPLAIN CREATE OR
// REPLACE of an existing view): one line per stateful operator of the new
// plan with what would happen to its state.
func (s *session) explainAlter(n *front.Explain, inner *front.CreateMaterializedView) (*prepared, error) {
	cols := []types.Column{{Name: "QUERY PLAN", Type: types.Text}}
	return rowsResult(cols, func(ctx context.Context) ([]types.Row, error) {
		lines, err := s.e.explainAlter(ctx, inner, n.Stmt)
		if err != nil {
			return nil, err
		}
		rows := make([]types.Row, len(lines))
		for i, l := range lines {
			rows[i] = types.Row{types.NewString(l)}
		}
		return rows, nil
	}), nil
}
