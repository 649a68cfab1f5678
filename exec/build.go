package exec

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/metrics"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
)

// Operator indexes inside a view's object id. Operator state tables are
// numbered from firstOperatorIndex in a fixed walk of the plan, so that a
// view's state maps back to the same operators after a restart.
const (
	viewTableIndex     uint16 = 0
	viewMetaIndex      uint16 = 1
	firstOperatorIndex uint16 = 2
)

// ViewTablePrefix is the key prefix of a view's rows.
func ViewTablePrefix(id uint32) []byte { return storage.StatePrefix(id, viewTableIndex) }

// StartView builds the streaming dataflow of a materialized view from its
// plan, restores its operators' state and source positions from the store,
// and starts it as part of the next epoch. ups holds the plans of the
// views the dataflow computes itself (UpstreamPlans).
func (rt *Runtime) StartView(desc *catalog.Descriptor, root plan.Node, ups UpstreamPlans) error {
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
		return err
	}
	mat.rowsOut = metrics.ViewRowsOut.WithLabelValues(desc.Name)
	if len(desc.Indexes) > 0 {
		cols, err := desc.Schema()
		if err != nil {
			return err
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
		return err
	}
	mat.hub.sinks.update(func([]*sinkTap) []*sinkTap { return taps })
	bound := root
	root = streamingPlan(desc.Dataflow, root)
	b := &builder{rt: rt, p: p, nextOp: firstOperatorIndex, need: neededColumns{}, dataflow: desc.Dataflow, upstreams: ups}
	b.opIDs, _ = plan.NodeIDs(root) // a plan without ids names operators by kind (counted)
	if err := b.alterState(desc, root, mat); err != nil {
		return err
	}
	b.need.mark(root, plan.AllColumns(len(root.Schema())))
	if _, err := b.build(root, mat); err != nil {
		return err
	}
	p.layout = b.layout(root)
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
	return rt.addPipeline(p, viewSpec{desc: desc, root: bound, ups: ups}, b.edges)
}

// streamingPlan is the plan a view of format dataflow builds its dataflow
// from: root rewritten by the streaming rules of that format
// (plan.StreamingRules; from DataflowNarrowRows on, the columns nothing
// reads are dropped). The output columns stay the same.
func streamingPlan(dataflow catalog.FormatVersion, root plan.Node) plan.Node {
	return plan.RewriteStreaming(root, dataflow, nil)
}

type builder struct {
	rt     *Runtime
	p      *pipeline
	nextOp uint16
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
	shared   map[string]*sharedSource
	subplans map[string]*sharedSubplan
	// upstreams are the plans of the views the dataflow computes itself.
	upstreams UpstreamPlans
	// edges are the view's inputs from the pipelines of the views and
	// tables it reads, from DataflowViewEdges on (attach.go).
	edges []*edge

	// cur is the node whose operator is being built; slots records the
	// state tables each stateful node takes (opPrefix), lastOp the last.
	// pins, for an altered view, gives each node its state tables by
	// operator id (catalog.Descriptor.OpState); reemit are the tables
	// whose aggregates re-send their output once (exec/alter.go).
	cur    plan.Node
	slots  []OpSlot
	lastOp uint16
	pins   map[plan.Node][]uint16
	reemit map[uint16]bool
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

func (b *builder) opPrefix() []byte {
	idx := b.nextOp
	if list := b.pins[b.cur]; len(list) > 0 {
		idx, b.pins[b.cur] = list[0], list[1:]
	} else {
		b.nextOp++
	}
	b.lastOp = idx
	if n := len(b.slots); n > 0 && b.slots[n-1].Node == b.cur {
		b.slots[n-1].Indexes = append(b.slots[n-1].Indexes, idx)
	} else {
		b.slots = append(b.slots, OpSlot{Node: b.cur, Indexes: []uint16{idx}})
	}
	return storage.StatePrefix(b.p.id, idx)
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
		prefix := b.opPrefix()
		reemit := b.reemit[b.lastOp]
		var extrema *extremaTable
		if b.dataflow >= catalog.DataflowExtremaByValue && slices.ContainsFunc(n.Aggs, func(c plan.AggCall) bool { return storedExtremeCall(c, 0, ao) }) {
			// A second state table, for the values of min and max.
			var err error
			if extrema, err = newExtremaTable(b.rt.store, b.opPrefix(), b.rt.CommittedEpoch); err == nil {
				extrema.appendKey = keyAppender(b.dataflow)
			}
			if err != nil {
				return nil, err
			}
		}
		op, err := newAggOpWith(n, ao, b.dataflow, prefix, b.rt.store, limit, extrema, next)
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
