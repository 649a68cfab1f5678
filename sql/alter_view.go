package sql

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/plan"
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
// sql binds the new query and builds the view's new descriptor; meta maps
// the old operators' state onto the new plan and swaps the state
// (meta/view_alter.go).

// allowNonRestoredOption lets ALTER start operators empty whose state
// cannot be restored or backfilled (Flink's --allowNonRestoredState).
const allowNonRestoredOption = "allow_non_restored_state"

// planAlter works out an ALTER of existing view old to query n, which
// bind binds. The caller holds ddlMu.
func (e *Engine) planAlter(ctx context.Context, old *catalog.Descriptor, n *front.CreateMaterializedView, st *front.Statement, bind func() (plan.Node, error)) (*meta.ViewAlter, error) {
	if old.Kind == catalog.KindUnpopulatedView {
		return nil, binder.NotPopulated(old.Name)
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
	if err := binder.CheckStreamable(root); err != nil {
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
	// its format and vnode count (the state kept is encoded by them).
	d.ID, d.Dataflow, d.VNodes, d.CreatedAt = old.ID, old.Dataflow, old.VNodes, old.CreatedAt
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
	return e.ddl.PlanAlter(ctx, old, d, root, allow)
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
	d := a.View
	e.log.Info("altered materialized view", "view", d.Name, "savepoint", point, "backfill", a.Rebuild)
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
		e.ddl.FinishPopulating(cur)
	}
	return tag, nil
}

// planAlterView plans ALTER of view n.Name under ddlMu: the view as it is
// and the plan that changes it, or the reason it cannot be changed.
func (e *Engine) planAlterView(ctx context.Context, n *front.CreateMaterializedView, st *front.Statement, bind func() (plan.Node, error)) (*catalog.Descriptor, *meta.ViewAlter, error) {
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
		err = a.Refusal()
	}
	if err != nil {
		return nil, nil, err
	}
	return old, a, nil
}

// swapAlteredView applies plan a under ddlMu, unless view old changed
// since it was planned.
func (e *Engine) swapAlteredView(ctx context.Context, n *front.CreateMaterializedView, old *catalog.Descriptor, a *meta.ViewAlter) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if cur, ok := e.lookup(n.Name); !ok || cur != old {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s changed during ALTER; nothing was changed", n.Name).WithHint("Run the ALTER again.")
	}
	return e.swapView(ctx, a)
}

// swapView carries the old view's indexes over to the new one (those
// whose columns it still has), swaps the view's state (meta.DDL.SwapView)
// and notices the indexes dropped. The caller holds ddlMu.
func (e *Engine) swapView(ctx context.Context, a *meta.ViewAlter) error {
	droppedIndexes, err := carriedIndexes(a.Old, a.View)
	if err != nil {
		return err
	}
	if err := e.ddl.SwapView(ctx, a); err != nil {
		return err
	}
	noticeDroppedIndexes(ctx, a.View.Name, droppedIndexes)
	return nil
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
	return a.Explain(), nil
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
	delete(out, meta.PopulatingOption)
	delete(out, binder.UIDsOption) // names belong to the query they were given with
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
