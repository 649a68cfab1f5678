package exec

import (
	"fmt"
	"log/slog"
	"math"
	"strings"

	"streamdb/catalog"
	"streamdb/metrics"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
)

// Table indexes inside a view's object id: its rows, its meta table, and
// from firstOperatorIndex on its operators' state tables, which the view
// records by operator id (catalog.Descriptor.OpState, state_layout.go).
const (
	viewTableIndex     uint16 = 0
	viewMetaIndex      uint16 = 1
	firstOperatorIndex uint16 = 2
)

// FirstOperatorIndex is the first index of an operator's state table in
// a view's object id.
const FirstOperatorIndex = firstOperatorIndex

// ViewTablePrefix is the key prefix of a view's rows.
func ViewTablePrefix(id uint32) []byte { return storage.StatePrefix(id, viewTableIndex) }

// StartView builds the streaming dataflow of a materialized view from its
// plan, restores its operators' state and source positions from the store,
// and starts it as part of the next epoch. ups holds the plans of the
// views the dataflow computes itself (UpstreamPlans).
func (rt *Runtime) StartView(desc *catalog.Descriptor, root plan.Node, ups UpstreamPlans) error {
	p, edges, err := rt.buildView(desc, root, ups)
	if err != nil {
		return err
	}
	return rt.addPipeline(p, viewSpec{desc: desc, root: root, ups: ups}, edges)
}

// buildView builds the pipeline of view desc from its bound plan root,
// its operators restored from the store, and returns it with its edges
// (the inputs addPipeline wires to the upstreams' pipelines); nothing runs
// yet.
func (rt *Runtime) buildView(desc *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (*pipeline, []*edge, error) {
	p := &pipeline{id: desc.ID, name: desc.Name, in: make(chan pipelineMsg, 64), rt: rt, log: rt.log,
		rowsIn: metrics.ViewRowsIn.WithLabelValues(desc.Name)}
	keyCols := UniqueKey(root)
	mode := Counted
	switch {
	case keyCols != nil:
		mode = Keyed
		cols := root.Schema()
		for _, k := range keyCols {
			p.keyNames = append(p.keyNames, cols[k].Name)
		}
	case appendOnly(root):
		mode = AppendOnly
	case (&builder{rt: rt, p: p, dataflow: desc.Dataflow}).inputKey(root) != nil:
		mode = CountedSet
	}
	mat, err := newMaterializeOp(mode, keyCols, ViewTablePrefix(desc.ID), storage.StatePrefix(desc.ID, viewMetaIndex), rt.store,
		rt.cacheLimit(p, groupCacheKind, &rt.groupCache))
	if err != nil {
		return nil, nil, err
	}
	mat.rowsOut = metrics.ViewRowsOut.WithLabelValues(desc.Name)
	mat.vnodes = desc.RowVNodes()
	if len(desc.Indexes) > 0 {
		cols, err := desc.Schema()
		if err != nil {
			return nil, nil, err
		}
		mat.indexes = newIndexWriters(desc, cols)
	}
	if desc.Kind == catalog.KindView {
		mat.epochLimit, mat.view = &rt.epochLimit, desc.Name
	}
	mat.spills = desc.Kind == catalog.KindTable
	mat.hub = &edgeHub{}
	p.mat = mat
	p.hub = mat.hub
	taps, err := loadSinkTaps(rt.store, desc.ID)
	if err != nil {
		return nil, nil, err
	}
	mat.hub.sinks.update(func([]*sinkTap) []*sinkTap { return taps })
	bound := root
	root = streamingPlan(desc.Dataflow, root)
	b := &builder{rt: rt, p: p, need: neededColumns{}, dataflow: desc.Dataflow, vnodes: desc.StateVNodes(), upstreams: ups}
	b.opIDs, _ = plan.NodeIDs(root) // a plan without ids names operators by kind (counted)
	b.stateIDs = stateIDs("", root)
	slots, err := StateSlots(desc, bound, ups)
	if err != nil {
		return nil, nil, err
	}
	if b.tables, err = stateTables(desc, slots); err != nil {
		return nil, nil, err
	}
	if err := b.alterState(desc, mat); err != nil {
		return nil, nil, err
	}
	b.need.mark(root, plan.AllColumns(len(root.Schema())))
	if _, err := b.build(root, mat); err != nil {
		return nil, nil, err
	}
	if !sameSlots(b.slots, slots) {
		return nil, nil, fmt.Errorf("internal error: materialized view %s built other stateful operators than its layout lists", desc.Name)
	}
	p.layout = b.layout(root, desc.NextOp)
	if len(p.sources) == 0 && len(b.edges) == 0 {
		// No input brings barriers (edges join p.edgeIn in addPipeline).
		p.clock = make(chan uint64, 64)
	}
	if b.valuesPending {
		// Reads wait for the epoch that holds the rows (alterVisible).
		mat.firstOut = true
		mat.alterEpoch.Store(math.MaxUint64)
	}
	if len(b.watermarks) > 0 {
		var sts []*watermarkState
		for _, st := range b.watermarks {
			sts = append(sts, st)
		}
		rt.late.Store(p.id, sts)
	}
	if len(b.edges) > 0 {
		mat.marker = attachedMarker(desc.ID)
	}
	return p, b.edges, nil
}

// streamingPlan is the plan a view of format dataflow builds its dataflow
// from: root rewritten by the streaming rules of that format
// (plan.StreamingRules; from DataflowNarrowRows on, the columns nothing
// reads are dropped). The output columns stay the same.
func streamingPlan(dataflow catalog.FormatVersion, root plan.Node) plan.Node {
	return plan.RewriteStreaming(root, dataflow, nil)
}

type builder struct {
	rt *Runtime
	p  *pipeline
	// watermarks are the watermark states of the pipeline's stream scans
	// that declare one, made on first use by a reader or an operator that
	// frees state by it: by scan, or by sharedScanKey for scans that share
	// a reader (and so its watermark).
	watermarks map[any]*watermarkState
	// need says which columns of each stream scan the dataflow reads.
	need neededColumns
	// dataflow is the view's layout (catalog.Dataflow*); shared holds the
	// readers its scans share under DataflowSharedScans.
	dataflow catalog.FormatVersion
	// vnodes is the view's vnode count (catalog.StateVNodes): the state
	// tables of the operators its format keys by vnode carry it.
	vnodes   int
	shared   map[string]*sharedSource
	subplans map[string]*sharedSubplan
	// upstreams are the plans of the views the dataflow computes itself.
	upstreams UpstreamPlans
	// edges are the view's inputs from the pipelines of the views and
	// tables it reads, from DataflowViewEdges on (attach.go).
	edges []*edge

	// cur is the node whose operator is being built; slots records the
	// state tables each stateful operator took (opPrefix), lastOp the
	// last. tables holds, by operator id, the state tables not taken yet
	// (catalog.Descriptor.OpState, checked against StateSlots); stateIDs
	// names the nodes by operator id, those of the views the dataflow
	// computes itself included (stateIDs). reemit are the tables whose
	// aggregates re-send their output once (exec/alter.go).
	cur      plan.Node
	slots    []OpSlot
	lastOp   uint16
	tables   map[string][]uint16
	stateIDs map[plan.Node]string
	reemit   map[uint16]bool
	// opIDs are the operator ids of the streaming plan's nodes, which
	// name each operator's figures (countingOp).
	opIDs map[plan.Node]string
	// valuesPending: a VALUES branch sends its rows at the first barrier.
	valuesPending bool
}

func (b *builder) watermarkFor(s *plan.Scan) *watermarkState {
	if b.watermarks == nil {
		b.watermarks = map[any]*watermarkState{}
	}
	var k any = s
	if key := sharedScanKey(b.dataflow, s); key != "" {
		k = key
	}
	st, ok := b.watermarks[k]
	if !ok {
		st = &watermarkState{view: b.p.name, stream: s.Object.Name}
		b.watermarks[k] = st
	}
	return st
}

// opPrefix is the key prefix of the first state table of the operator
// being built (cur), the next one in its layout; moreTables gives it
// another.
func (b *builder) opPrefix() ([]byte, error) {
	id := b.stateIDs[b.cur]
	b.slots = append(b.slots, OpSlot{Node: b.cur, ID: id})
	return b.moreTables()
}

// moreTables is the key prefix of another state table of the operator
// opPrefix began.
func (b *builder) moreTables() ([]byte, error) {
	s := &b.slots[len(b.slots)-1]
	list := b.tables[s.ID]
	if len(list) == 0 {
		return nil, fmt.Errorf("internal error: materialized view %s: operator %s takes more state tables than its layout lists", b.p.name, s.ID)
	}
	idx := list[0]
	b.tables[s.ID] = list[1:]
	b.lastOp = idx
	s.Indexes = append(s.Indexes, idx)
	return storage.StatePrefix(b.p.id, idx), nil
}

// build returns the operator that receives n's input, with n's operator
// chained in front of next; a subplan the view computes already is shared
// (see buildShared).
func (b *builder) build(n plan.Node, next Operator) (Operator, error) {
	next = b.counted(n, next)
	if op, shared, err := b.buildShared(n, next); shared {
		return op, err
	}
	return b.buildOperator(n, next)
}

// buildOperator builds n's own operator in front of next, and its inputs.
func (b *builder) buildOperator(n plan.Node, next Operator) (Operator, error) {
	prev := b.cur
	b.cur = n
	defer func() { b.cur = prev }()
	switch n := n.(type) {
	case *plan.Scan:
		switch n.Object.Kind {
		case catalog.KindStream:
			return next, b.addStreamScan(n, next)
		case catalog.KindTable, catalog.KindView:
			if b.dataflow >= catalog.DataflowViewEdges && n.Object.ID != b.p.id {
				// The changes the object's own pipeline applies.
				return next, b.addEdge(n, next)
			}
		}
		switch n.Object.Kind {
		case catalog.KindTable:
			if n.Object.Envelope() != "" {
				return next, b.addEnvelopeSource(n, next)
			}
			// A table's changelog carries its inserts, updates and
			// deletes as signed rows; the reader replays it from the
			// table's start.
			cols, missing, err := MessageColumns(n)
			if err != nil {
				return nil, err
			}
			return next, b.addSource(n, NewChangelogMessageDecoder(cols, missing), next)
		case catalog.KindView:
			// A view over a view computes the inner view's dataflow
			// itself, from the same streams: results are identical, and
			// backfill, barriers and recovery need nothing special.
			inner, ok := b.upstreams[n]
			if !ok {
				return nil, fmt.Errorf("materialized view %s: the plan of view %s it reads was not given", b.p.name, n.Object.Name)
			}
			inner = streamingPlan(b.dataflow, inner)
			for in, id := range stateIDs(b.stateIDs[n], inner) {
				b.stateIDs[in] = id
			}
			need, ok := b.need[n]
			if !ok {
				need = plan.AllColumns(len(inner.Schema()))
			}
			b.need.mark(inner, need)
			return b.build(inner, next)
		}
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a materialized view over %s %s is not supported", n.Object.Kind, n.Object.Name)
	case *plan.Values:
		return b.addValues(n, next)
	case *plan.Filter:
		return b.build(n.Input, &filterOp{cond: n.Cond, next: next})
	case *plan.Project:
		return b.build(n.Input, &projectOp{exprs: n.Exprs, next: next})
	case *plan.Window:
		return b.build(n.Input, newWindowOp(n, next))
	case *plan.Union:
		u := &unionOp{inputs: len(n.Inputs), next: next}
		for _, in := range n.Inputs {
			if _, err := b.build(in, u); err != nil {
				return nil, err
			}
		}
		return u, nil
	case *plan.Join:
		op, err := b.newJoin(n, next)
		if err != nil {
			return nil, err
		}
		if _, err := b.build(n.Left, op.port(0)); err != nil {
			return nil, err
		}
		if _, err := b.build(n.Right, op.port(1)); err != nil {
			return nil, err
		}
		return op.port(0), nil
	case *plan.Sort, *plan.Limit, *plan.TopN:
		return b.buildTopN(n, next)
	case *plan.Aggregate:
		limit := b.cacheLimit(groupCacheKind, &b.rt.groupCache)
		ao := appendOnly(n.Input)
		prefix, err := b.opPrefix()
		if err != nil {
			return nil, err
		}
		reemit := b.reemit[b.lastOp]
		var extrema *extremaTable
		if aggExtremaTable(b.dataflow, n) {
			// A second state table, for the values of min and max.
			more, err := b.moreTables()
			if err != nil {
				return nil, err
			}
			if extrema, err = newExtremaTable(b.rt.store, more, b.vnodes, b.rt.CommittedEpoch); err != nil {
				return nil, err
			}
			extrema.appendKey = keyAppender(b.dataflow)
		}
		op, err := newAggOpWith(n, ao, b.dataflow, prefix, b.vnodes, b.rt.store, limit, extrema, next)
		if err != nil {
			return nil, err
		}
		op.reemit = reemit
		if c := findWindowCloser(n, b.watermarkFor); c != nil {
			if err := op.closeWindowsBy(c); err != nil {
				return nil, err
			}
		}
		return b.build(n.Input, op)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in a materialized view yet", n.Describe())
}

func (b *builder) addSource(s *plan.Scan, dec messageDecoder, head Operator) error {
	idx := uint16(len(b.p.sources))
	pos, err := b.rt.store.Position(b.p.id, idx)
	if err != nil {
		return err
	}
	r := &sourceReader{
		idx: idx, name: s.Object.Name, table: s.Object.Kind == catalog.KindTable, jsStream: s.Object.JSStream, subject: s.Object.Subject,
		decoder: dec, broker: b.rt.broker, rt: b.rt, pipe: b.p, watermark: s.Watermark,
		log:      b.rt.log.With(slog.String("view", b.p.name)),
		pos:      pos,
		barriers: make(chan barrierRequest, 64),
		progress: make(chan struct{}, 1),
		out:      b.p.in,
		free:     make(chan *Chunk, freeChunks),
	}
	r.skippedTotal.Store(pos.Skipped)
	if b.rt.follower != nil {
		r.cutter = b.rt.followCutter(r.subject) // epoch_follow.go
	}
	b.p.sources = append(b.p.sources, r)
	b.p.heads = append(b.p.heads, head)
	b.p.committed = append(b.p.committed, pos)
	return nil
}

// UniqueKey returns the output columns of n that form a unique key of its
// result, or nil when it has none that is known. It decides how a view is
// materialized, so it depends on the plan alone (a scanned table's
// primary key), never on what runs.
func UniqueKey(n plan.Node) []int { return uniqueKey(n, TableKey) }

// uniqueKey is UniqueKey with the key of each scanned object given by
// scanKey.
func uniqueKey(n plan.Node, scanKey func(*plan.Scan) []int) []int {
	switch n := n.(type) {
	case *plan.Scan:
		return scanKey(n)
	case *plan.Aggregate:
		key := make([]int, len(n.GroupBy))
		for i := range key {
			key[i] = i
		}
		return key
	case *plan.Filter:
		return uniqueKey(n.Input, scanKey)
	case *plan.Sort, *plan.Limit, *plan.TopN:
		return topNUniqueKey(n, scanKey)
	case *plan.Project:
		in := uniqueKey(n.Input, scanKey)
		if in == nil {
			return nil
		}
		out := make([]int, 0, len(in))
		for _, k := range in {
			found := -1
			for j, e := range n.Exprs {
				if ref, ok := colRefIndex(e); ok && ref == k {
					found = j
					break
				}
			}
			if found < 0 {
				return nil
			}
			out = append(out, found)
		}
		return out
	}
	return nil
}

// ExplainStreaming renders the dataflow StartView would build for root as
// a new view: the materialization (how rows are keyed) over the plan's
// operators, then what is computed once for several uses.
func ExplainStreaming(root plan.Node) string {
	key := UniqueKey(root)
	var mat string
	switch {
	case key != nil:
		cols := root.Schema()
		names := make([]string, len(key))
		for i, k := range key {
			names[i] = cols[k].Name
		}
		mat = fmt.Sprintf("Materialize key=[%s]", strings.Join(names, ", "))
	case appendOnly(root):
		mat = "Materialize append-only (row id)"
	default:
		mat = "Materialize counted rows (multiset)"
	}
	root = streamingPlan(catalog.DataflowLatest, root)
	lines := strings.Split(strings.TrimRight(explainStreamingTree(root), "\n"), "\n")
	var sb strings.Builder
	sb.WriteString(mat + "\n")
	for _, l := range lines {
		l = strings.Replace(l, "Scan stream", "StreamSource", 1)
		l = strings.Replace(l, "Scan table", "TableSource", 1)
		l = strings.Replace(l, "Aggregate", "StreamAggregate", 1)
		sb.WriteString("  " + l + "\n")
	}
	for _, note := range sharingNotes(root) {
		sb.WriteString(strings.Replace(note, "Aggregate", "StreamAggregate", 1) + "\n")
	}
	return sb.String()
}

// SourceStreams lists the streams the dataflow of view desc reads, in the
// order of its source indexes (views it reads are expanded from ups and
// scans share readers as StartView does).
func SourceStreams(desc *catalog.Descriptor, root plan.Node, ups UpstreamPlans) []string {
	var out []string
	shared := map[string]bool{}
	var walk func(plan.Node)
	walk = func(n plan.Node) {
		for _, s := range plan.Scans(n) {
			if desc.Dataflow >= catalog.DataflowViewEdges && s.Object.ID != desc.ID &&
				(s.Object.Kind == catalog.KindView || s.Object.Kind == catalog.KindTable) {
				continue // read through an edge, with no position
			}
			switch {
			case s.Object.Kind == catalog.KindStream || s.Object.Kind == catalog.KindTable:
				if key := sharedScanKey(desc.Dataflow, s); key != "" {
					if shared[key] {
						continue
					}
					shared[key] = true
				}
				out = append(out, s.Object.Name)
			case s.Object.Kind == catalog.KindView && ups[s] != nil:
				walk(ups[s])
			}
		}
	}
	walk(root)
	return out
}

// TableKey returns the positions of a table's primary key columns in the
// scan's output, or nil for anything but a table with a primary key.
func TableKey(s *plan.Scan) []int {
	if s.Object.Kind != catalog.KindTable || len(s.Object.PrimaryKey) == 0 {
		return nil
	}
	return scanColumns(s, s.Object.PrimaryKey)
}

// scanColumns returns the positions in s's output of the named columns,
// or nil if one is not read.
func scanColumns(s *plan.Scan, names []string) []int {
	key := make([]int, 0, len(names))
	for _, name := range names {
		found := -1
		for i, c := range s.Cols {
			if c.Name == name {
				found = i
			}
		}
		if found < 0 {
			return nil
		}
		key = append(key, found)
	}
	return key
}
