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
// whether view v, of format from, would build other operators or state
// under from+1.
type formatStep struct {
	from    catalog.FormatVersion
	affects func(from catalog.FormatVersion, v stepView) bool
	// migrate, when set, rewrites in b the state of view d, which the
	// step affects (streaming plan root of format from), into format
	// from+1, reading it from b (an indexed batch over the store, which
	// holds the rewrites of the steps before); ok false: it cannot for
	// this view, and b is untouched.
	migrate func(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (ok bool, err error)
}

// formatSteps are the steps views take, oldest first and consecutive.
var formatSteps = []formatStep{
	// Scans of a stream without a WATERMARK that would share a reader:
	// two or more with one sharing key (sharedScanKey). A lone scan's
	// reader gets a tee of one output, which keeps no state.
	{catalog.DataflowOneReaderPerScan, func(_ catalog.FormatVersion, v stepView) bool {
		return v.repeats(func(n plan.Node) string {
			if s, ok := n.(*plan.Scan); ok {
				return sharedScanKey(catalog.DataflowSharedScans, s)
			}
			return ""
		})
	}, nil},
	// Subplans over shared scans computed once: two or more nodes with
	// one subplan key (buildShared). A lone one is built as before.
	{catalog.DataflowSharedScans, func(_ catalog.FormatVersion, v stepView) bool {
		return v.repeats(func(n plan.Node) string {
			if _, ok := n.(*plan.Scan); ok {
				return ""
			}
			return subplanKey(catalog.DataflowSharedSubplans, n)
		})
	}, nil},
	// Inner joins of append-only inputs, which become append-only
	// (appendOnly): the view keeps its rows by row id, aggregates over
	// them take insert-only accumulators. The other joins keep their
	// state: joinStateRowInKey writes an entry's value without the row
	// that format 2 put after the counts, and reads the counts
	// alone, so the entries written before read the same.
	{catalog.DataflowSharedSubplans, func(_ catalog.FormatVersion, v stepView) bool {
		return v.any(func(n plan.Node) bool { j, ok := n.(*plan.Join); return ok && plan.AppendOnlyJoins(j) })
	}, nil},
	// Joins, whose inputs are narrowed (plan.PruneColumns); no other
	// operator keeps its input's rows in state, and an aggregate keeps
	// its calls. An altered view's state tables follow its operator ids,
	// which new nodes of the rewritten plan would not keep.
	// migrateJoinRows narrows the rows a join keeps.
	{catalog.DataflowAppendOnlyJoins, func(from catalog.FormatVersion, v stepView) bool {
		return v.desc.OpState != nil || joinsChange(from, v)
	}, migrateJoinRows},
	// Joins, whose state is keyed by entry id (joinStateByID);
	// migrateJoinByID re-keys it.
	{catalog.DataflowNarrowRows, joinsChange, migrateJoinByID},
	// Joins, whose state is paged (joinStateByPage); migrateJoinPages
	// makes each entry a page.
	{catalog.DataflowJoinStateByID, joinsChange, migrateJoinPages},
	// Sums and averages whose state gains the counts of NaN and infinite
	// inputs (sumAcc.hasSpecials); migrateSumState adds them.
	{catalog.DataflowJoinStatePaged, func(_ catalog.FormatVersion, v stepView) bool {
		return v.any(func(n plan.Node) bool {
			a, ok := n.(*plan.Aggregate)
			return ok && hasSumWithSpecials(a)
		})
	}, migrateSumState},
	// Joins, whose state is keyed by side and join key (newJoin);
	// migrateJoinByKey re-keys it.
	{catalog.DataflowSumSpecials, joinsChange, migrateJoinByKey},
	// Scans of tables and views, read through edges (addEdge).
	{catalog.DataflowJoinStateByKey, func(_ catalog.FormatVersion, v stepView) bool {
		return v.any(func(n plan.Node) bool {
			s, ok := n.(*plan.Scan)
			return ok && (s.Object.Kind == catalog.KindTable || s.Object.Kind == catalog.KindView)
		})
	}, nil},
	// Sorts, limits and top-Ns, whose state is keyed by partition and
	// rank (topNOp.byKey); migrateTopNState re-keys it.
	{catalog.DataflowViewEdges, func(_ catalog.FormatVersion, v stepView) bool {
		return v.any(func(n plan.Node) bool {
			switch n.(type) {
			case *plan.Sort, *plan.Limit, *plan.TopN:
				return true
			}
			return false
		})
	}, migrateTopNState},
	// Aggregates with min or max over a retracting input, whose values go
	// to an extrema table (storedExtremeCall).
	{catalog.DataflowTopNStateByKey, func(_ catalog.FormatVersion, v stepView) bool {
		return v.any(func(n plan.Node) bool {
			a, ok := n.(*plan.Aggregate)
			if !ok || appendOnly(a.Input) {
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
	{catalog.DataflowExtremaByValue, func(_ catalog.FormatVersion, v stepView) bool {
		return v.repeats(func(n plan.Node) string {
			if s, ok := n.(*plan.Scan); ok && s.Watermark != nil {
				return sharedScanKey(catalog.DataflowSharedWatermarkScans, s)
			}
			return ""
		})
	}, nil},
	// Interval values in state keys (keyAppender) or in a group's state
	// (aggOp.keyInState): any interval a node outputs, groups, joins,
	// orders or aggregates.
	{catalog.DataflowSharedWatermarkScans, func(_ catalog.FormatVersion, v stepView) bool {
		return v.any(keysInterval)
	}, nil},
	// Aggregates and top-Ns, whose state keys carry the vnode of their
	// group or partition key (appendVNodeKey); migrateVNodeKeys re-keys
	// them.
	{catalog.DataflowIntervalSpans, func(_ catalog.FormatVersion, v stepView) bool {
		return v.any(func(n plan.Node) bool {
			_, isAgg := n.(*plan.Aggregate)
			return isAgg || plan.StreamingTopN(n) != nil
		})
	}, migrateVNodeKeys},
	// Joins, whose page keys carry the vnode of their join key
	// (appendBucketPrefix); migrateJoinVNodes re-keys them.
	{catalog.DataflowVNodeKeys, joinsChange, migrateJoinVNodes},
	// Every view's rows, whose keys carry the vnode of the key they are
	// stored by (materializeOp.rowKeyDone), and its indexes' entries,
	// which end with that key; migrateViewRowVNodes re-keys them.
	{catalog.DataflowJoinVNodes, func(_ catalog.FormatVersion, v stepView) bool {
		return v.desc.Kind == catalog.KindView
	}, migrateViewRowVNodes},
}

// MigratedFormat is the format a view of format from, with bound plan
// root, reaches through the format steps that leave its state as it is
// (from itself when the first step changes it).
func MigratedFormat(from catalog.FormatVersion, root plan.Node) catalog.FormatVersion {
	f, _ := migrate(nil, &catalog.Descriptor{Dataflow: from}, root, nil)
	return f
}

// MigrateView moves view d (bound plan root; ups, the plans of the views
// its dataflow computes itself, as for StartView) forward: through the
// steps that leave its state as it is, and through those whose migration
// rewrites its state, written to b. It returns the format reached (the
// view's own when it cannot move). The caller commits b with the
// descriptor of that format in one batch, so that a crash leaves the
// view's state and format both old or both new; a view that reached its
// format is never migrated again from an older one.
func MigrateView(st *storage.Store, b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (catalog.FormatVersion, error) {
	// Each migration reads what the ones before it wrote.
	ib := st.DB().NewIndexedBatch()
	defer ib.Close()
	f, err := migrate(ib, d, root, ups)
	if err == nil && f != d.Dataflow {
		err = b.Apply(ib, nil)
	}
	if err != nil {
		return d.Dataflow, err
	}
	return f, nil
}

// migrate is MigrateView, rewrites read from and written to the indexed
// batch b; with b nil it stops before any step that would rewrite state.
// A step whose migration fails for the view stops it there; the
// rewrites of the steps before it stay in b, as the format reached is
// theirs.
func migrate(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (catalog.FormatVersion, error) {
	f := d.Dataflow
	for _, s := range formatSteps {
		if s.from != f || f >= catalog.DataflowLatest {
			continue
		}
		v := stepView{desc: d, from: f, root: streamingPlan(f, root), ups: ups}
		if s.affects(f, v) {
			if s.migrate == nil || b == nil {
				break
			}
			at := *d
			at.Dataflow = f
			ok, err := s.migrate(b, &at, v.root, ups)
			if err != nil || !ok {
				return f, err
			}
		}
		f++
	}
	return f, nil
}

// stepView is a view as a format step sees it: its descriptor, its
// streaming plan under the step's format from, and the plans of the views
// its dataflow computes itself (ExpandsView), whose operators and state
// are among its own.
type stepView struct {
	desc *catalog.Descriptor
	from catalog.FormatVersion
	root plan.Node
	ups  UpstreamPlans
}

// any reports whether match holds for some node of the view's dataflow:
// of its plan, and of the plans of the views it computes, as the builder
// expands them.
func (v stepView) any(match func(plan.Node) bool) bool {
	return v.anyUnder(v.root, match)
}

func (v stepView) anyUnder(root plan.Node, match func(plan.Node) bool) bool {
	at := *v.desc
	at.Dataflow = v.from
	return anyNode(root, func(n plan.Node) bool {
		if match(n) {
			return true
		}
		s, ok := n.(*plan.Scan)
		if !ok || !ExpandsView(&at, s) {
			return false
		}
		inner, ok := v.ups[s]
		if !ok {
			return true // operators the plan does not show
		}
		return v.anyUnder(streamingPlan(v.from, inner), match)
	})
}

// repeats reports whether two nodes of the view's dataflow have one
// non-empty key: the builder would share what they compute.
func (v stepView) repeats(key func(plan.Node) string) bool {
	seen := map[string]bool{}
	return v.any(func(n plan.Node) bool {
		k := key(n)
		if k == "" {
			return false
		}
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	})
}

// joinsChange is the rule of the steps that change every join's state:
// the view has a join.
func joinsChange(_ catalog.FormatVersion, v stepView) bool {
	return v.any(func(n plan.Node) bool { _, ok := n.(*plan.Join); return ok })
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

// movedEntry is a state entry a migration step moves: deleted under old,
// set under key with val (either nil: only set, or only deleted).
type movedEntry struct{ old, key, val []byte }

// moveEntries writes a step's moves into b: every old key deleted first,
// then every new one set, so that a new key equal to another entry's old
// key keeps its new value.
func moveEntries(b *pebble.Batch, entries []movedEntry) error {
	for _, e := range entries {
		if e.old == nil {
			continue
		}
		if err := b.Delete(e.old, nil); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if e.key == nil {
			continue
		}
		if err := b.Set(e.key, e.val, nil); err != nil {
			return err
		}
	}
	return nil
}
