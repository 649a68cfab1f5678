package exec

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// Formats ratchet (as Pebble's FormatMajorVersion does): at start, before
// any view is restored, a view moves from its format to the next one
// through every format step that leaves its state as it is, and its
// descriptor records the format it reached (MigratedFormat). A step
// changes how some kinds of operators are built or encode their state;
// a view none of whose operators is of those kinds builds, under the next
// format, the same operators with the same state tables, source positions
// and encodings, so the step is only the new number. A view a step does
// change moves on only when the step has a migration that rewrites its
// state into the next format exactly (MigrateView); otherwise it stays at
// the format before the step, and is read in that format.
//
// The rules below mirror the exec branches on each format: a new format
// adds a step here that says which views it changes (or, when its change
// reaches no state, none).

// formatStep is the step from format from to from+1: affects reports
// whether a view of format from with streaming plan root (streamingPlan)
// would build other operators or state under from+1.
type formatStep struct {
	from    catalog.FormatVersion
	affects func(from catalog.FormatVersion, root plan.Node) bool
	// migrate, when set, rewrites in b the state of view d, which the
	// step affects (streaming plan root of format from), into format
	// from+1; ok false: it cannot for this view, and b is untouched.
	migrate func(st *storage.Store, b *pebble.Batch, d *catalog.Descriptor, root plan.Node) (ok bool, err error)
}

// formatSteps are the steps views take, oldest first and consecutive.
// Steps before DataflowJoinStatePaged change the plan or the join state
// of most views (shared scans and subplans, append-only joins, pruned
// columns, join state keyed by id); they have no rule here, and views of
// those formats keep them.
var formatSteps = []formatStep{
	// Sums and averages whose state gains the counts of NaN and infinite
	// inputs (sumAcc.hasSpecials); migrateSumState adds them.
	{catalog.DataflowJoinStatePaged, func(_ catalog.FormatVersion, root plan.Node) bool {
		return anyNode(root, func(n plan.Node) bool {
			a, ok := n.(*plan.Aggregate)
			return ok && hasSumWithSpecials(a) || scansView(n)
		})
	}, migrateSumState},
	// Joins, whose state is keyed by side and join key (newJoin).
	{catalog.DataflowSumSpecials, func(_ catalog.FormatVersion, root plan.Node) bool {
		return anyNode(root, func(n plan.Node) bool { _, ok := n.(*plan.Join); return ok || scansView(n) })
	}, nil},
	// Scans of tables and views, read through edges (addEdge).
	{catalog.DataflowJoinStateByKey, func(_ catalog.FormatVersion, root plan.Node) bool {
		return anyNode(root, func(n plan.Node) bool {
			s, ok := n.(*plan.Scan)
			return ok && (s.Object.Kind == catalog.KindTable || s.Object.Kind == catalog.KindView)
		})
	}, nil},
	// Sorts, limits and top-Ns, whose state is keyed by partition and
	// rank (topNOp.byKey); migrateTopNState re-keys it.
	{catalog.DataflowViewEdges, func(_ catalog.FormatVersion, root plan.Node) bool {
		return anyNode(root, func(n plan.Node) bool {
			switch n.(type) {
			case *plan.Sort, *plan.Limit, *plan.TopN:
				return true
			}
			return false
		})
	}, migrateTopNState},
	// Aggregates with min or max over a retracting input, whose values go
	// to an extrema table (storedExtremeCall).
	{catalog.DataflowTopNStateByKey, func(from catalog.FormatVersion, root plan.Node) bool {
		return anyNode(root, func(n plan.Node) bool {
			a, ok := n.(*plan.Aggregate)
			if !ok || appendOnly(from, a.Input) {
				return false
			}
			for _, c := range a.Aggs {
				if storedExtremeCall(c, 0, false) {
					return true
				}
			}
			return false
		})
	}, nil},
	// Scans of a stream with a WATERMARK that would share a reader: two
	// or more with one sharing key (sharedScanKey). A lone such scan
	// keeps its reader, watermark operator and state table.
	{catalog.DataflowExtremaByValue, func(_ catalog.FormatVersion, root plan.Node) bool {
		seen := map[string]bool{}
		return anyNode(root, func(n plan.Node) bool {
			s, ok := n.(*plan.Scan)
			if !ok || s.Object.Kind != catalog.KindStream || s.Watermark == nil {
				return false
			}
			key := sharedScanKey(catalog.DataflowSharedWatermarkScans, s)
			if seen[key] {
				return true
			}
			seen[key] = true
			return false
		})
	}, nil},
	// Interval values in state keys (keyAppender) or in a group's state
	// (aggOp.keyInState): any interval a node outputs, groups, joins,
	// orders or aggregates.
	{catalog.DataflowSharedWatermarkScans, func(_ catalog.FormatVersion, root plan.Node) bool {
		return anyNode(root, keysInterval)
	}, nil},
}

// MigratedFormat is the format a view of format from, with bound plan
// root, reaches through the format steps that leave its state as it is
// (from itself when the first step changes it).
func MigratedFormat(from catalog.FormatVersion, root plan.Node) catalog.FormatVersion {
	f, _ := migrate(nil, nil, &catalog.Descriptor{Dataflow: from}, root)
	return f
}

// MigrateView moves view d (bound plan root) forward: through the steps
// that leave its state as it is, and through those whose migration
// rewrites its state, written to b. It returns the format reached (the
// view's own when it cannot move). The caller commits b with the
// descriptor of that format in one batch, so that a crash leaves the
// view's state and format both old or both new; a view that reached its
// format is never migrated again from an older one.
func MigrateView(st *storage.Store, b *pebble.Batch, d *catalog.Descriptor, root plan.Node) (catalog.FormatVersion, error) {
	return migrate(st, b, d, root)
}

// migrate is MigrateView; with st nil it stops before any step that would
// rewrite state. A migration reads the committed state, not b, so at most
// one step that rewrites a view's state is taken per call.
func migrate(st *storage.Store, b *pebble.Batch, d *catalog.Descriptor, root plan.Node) (catalog.FormatVersion, error) {
	stream := streamingPlan(d.Dataflow, root)
	f, rewritten := d.Dataflow, false
	for _, s := range formatSteps {
		if s.from != f || f >= catalog.DataflowLatest {
			continue
		}
		if s.affects(f, stream) {
			if s.migrate == nil || st == nil || rewritten {
				break
			}
			ok, err := s.migrate(st, b, d, stream)
			if err != nil || !ok {
				return f, err
			}
			rewritten = true
		}
		f++
	}
	return f, nil
}

// anyNode reports whether match holds for some node of the plan under
// root, every occurrence visited. A node of a kind the format steps do not
// know matches: a step is taken only when it is known to change nothing.
func anyNode(root plan.Node, match func(plan.Node) bool) bool {
	switch root.(type) {
	case *plan.Scan, *plan.Values, *plan.Filter, *plan.Project, *plan.Aggregate,
		*plan.Sort, *plan.Limit, *plan.Union, *plan.Join, *plan.Window, *plan.TopN:
	default:
		return true
	}
	if match(root) {
		return true
	}
	for _, c := range root.Children() {
		if anyNode(c, match) {
			return true
		}
	}
	return false
}

// scansView reports whether n scans a view. Before DataflowViewEdges a
// view's dataflow computes the views it scans itself, their operators
// and state among its own, which the plan does not show: a step before
// that format may change them.
func scansView(n plan.Node) bool {
	s, ok := n.(*plan.Scan)
	return ok && s.Object.Kind == catalog.KindView
}

// hasSumWithSpecials reports whether an aggregate has a sum or avg whose
// state keeps the special counts under DataflowSumSpecials.
func hasSumWithSpecials(a *plan.Aggregate) bool {
	for _, c := range a.Aggs {
		if c.Func != "sum" && c.Func != "avg" {
			continue
		}
		arg := types.Unknown
		if c.Arg != nil {
			arg = c.Arg.Type()
		}
		res := c.T
		if c.Func == "avg" {
			res = sumTypeForAvg(arg)
		}
		if (&sumAcc{argType: arg, resType: res, specials: true}).hasSpecials() {
			return true
		}
	}
	return false
}

// keysInterval reports whether node n outputs an interval or keys, orders
// or aggregates one.
func keysInterval(n plan.Node) bool {
	for _, c := range n.Schema() {
		if c.Type == types.Interval {
			return true
		}
	}
	var exprs []interface{ Type() types.Type }
	switch x := n.(type) {
	case *plan.Aggregate:
		for _, g := range x.GroupBy {
			exprs = append(exprs, g)
		}
		for _, c := range x.Aggs {
			if c.Arg != nil {
				exprs = append(exprs, c.Arg)
			}
		}
	case *plan.Join:
		for _, k := range x.LeftKeys {
			exprs = append(exprs, k)
		}
		for _, k := range x.RightKeys {
			exprs = append(exprs, k)
		}
	case *plan.TopN:
		for _, p := range x.PartitionBy {
			exprs = append(exprs, p)
		}
		for _, k := range x.Order {
			exprs = append(exprs, k.Expr)
		}
	case *plan.Sort:
		for _, k := range x.Keys {
			exprs = append(exprs, k.Expr)
		}
	}
	for _, e := range exprs {
		if e.Type() == types.Interval {
			return true
		}
	}
	return false
}
