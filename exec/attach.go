package exec

import (
	"cmp"
	"slices"
	"sort"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// How pipelines connected by edges start, so that a reader sees exactly
// its upstream's changes once each:
//
//   - Resume. When the server starts, after a rollback, and when a
//     pipeline others read is restarted, every pipeline involved holds
//     state of the same committed epoch E. Pipelines added then are
//     registered but started only together, once all are built
//     (startDeferred): each edge is attached to its upstream before the
//     upstream takes any input, so it carries every change from E+1 on.
//     They take part in epochs from the first injected after that start
//     (launched), all in the same one: an upstream enrolled in an epoch
//     its reader is not would pass that epoch's barrier to the reader,
//     which labels its own epochs by the barriers it receives. A view an
//     ALTER emptied to backfill it (pipeline.reread) gets, on each edge,
//     the upstream's rows at E first.
//     A view whose state lacks attachedMarker (a checkpoint taken after
//     its CREATE but before its first epoch committed) attaches instead,
//     as below, since it holds none of its upstreams' state.
//   - Attach. A view created while the server runs waits, registered but
//     out of the epochs, for the next barrier the runtime injects once the
//     view has started (launched), e: it is then among the runtime's
//     pipelines, so it is enrolled in epoch e+1. Its edges join their
//     upstreams' hubs to receive what follows barrier e, and the view
//     takes part in epochs from e+1 on. When epoch e commits
//     the runtime takes a Pebble snapshot for each edge: the upstream's
//     state at e, which the edge emits as inserts before the changes of
//     e+1. Barrier e is the same for every upstream, so a view over
//     several views (or a view and streams) sees one consistent cut.
//
// A view over others is ready for reads once it has committed epoch e+1
// (Targets and WaitFor wait for that, and for the sources of the views it
// reads, since its epochs are theirs).

// edgeRegistry is the runtime's record of pipelines with edges; guarded
// by Runtime.mu.
type edgeRegistry struct {
	// running is set once the runtime starts pipelines as they are added
	// (Start, StartDeferred); holds counts groups being restarted.
	running  bool
	holds    int
	deferred []*pipeline
	// joining holds pipelines waiting for a barrier to attach at.
	joining map[uint32]*pipeline
	// snapshots holds, by epoch, the edges that get the committed state
	// of that epoch.
	snapshots map[uint64][]*edge
	// firstEpoch is, per attached pipeline, the first epoch holding its
	// upstreams' state; it is readable once that epoch committed.
	firstEpoch map[uint32]uint64
	// specs rebuilds pipelines with edges when an upstream restarts;
	// orphans holds, by upstream, those stopped with it.
	specs   map[uint32]viewSpec
	orphans map[uint32][]viewSpec
}

// viewSpec is what StartView was given for a view.
type viewSpec struct {
	desc *catalog.Descriptor
	root plan.Node
	ups  UpstreamPlans
}

func (r *edgeRegistry) init() {
	if r.joining == nil {
		r.joining = map[uint32]*pipeline{}
		r.snapshots = map[uint64][]*edge{}
		r.firstEpoch = map[uint32]uint64{}
		r.specs = map[uint32]viewSpec{}
		r.orphans = map[uint32][]viewSpec{}
	}
}

// attachedMarker is written in the state of a view whose edges have
// attached, so that it is never attached again with a snapshot on top of
// its own state.
func attachedMarker(id uint32) []byte {
	return append(storage.StatePrefix(id, viewMetaIndex), "edges"...)
}

// addEdge wires scan s of a view or table, whose rows go to next, to the
// running pipeline of that object.
func (b *builder) addEdge(s *plan.Scan, next Operator) error {
	rt := b.rt
	rt.mu.Lock()
	up := rt.pipelines[s.Object.ID]
	failed := rt.failed[s.Object.ID]
	rt.mu.Unlock()
	if up == nil {
		if failed != nil && failed.err != nil {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s %s stopped and cannot be read: %v", s.Object.Kind, s.Object.Name, failed.err).
				WithHint("Drop and re-create %s, or fix its input.", s.Object.Name)
		}
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s %s is not running", s.Object.Kind, s.Object.Name)
	}
	ncols := len(s.Cols)
	if s.Object.Kind == catalog.KindTable {
		ncols = len(s.Object.Columns)
		next = tableEdgeColumns(s, next)
	}
	idx := uint16(len(b.edges))
	b.edges = append(b.edges, newEdge(up, idx, next, ncols))
	return nil
}

// tableEdgeColumns puts in front of next what turns a table's rows, as
// its pipeline has them (every column it has now), into the rows of scan
// s, which has the columns the table had when the view was created: each
// column of s is the table's column of the same member key, or NULL for
// one dropped since (no view reads a column that is dropped).
func tableEdgeColumns(s *plan.Scan, next Operator) Operator {
	keys := s.Keys
	if keys == nil {
		keys = make([]string, len(s.Cols))
		for i, c := range s.Cols {
			keys[i] = c.Name
		}
	}
	same := len(keys) == len(s.Object.Columns)
	exprs := make([]expr.Expr, len(keys))
	for i, k := range keys {
		exprs[i] = &expr.Const{D: types.Null, T: s.Cols[i].Type}
		for j, c := range s.Object.Columns {
			if c.MemberKey() == k {
				exprs[i] = &expr.ColRef{Idx: j, Name: s.Cols[i].Name, T: s.Cols[i].Type}
				same = same && i == j
			}
		}
		if _, ok := exprs[i].(*expr.Const); ok {
			same = false
		}
	}
	if same {
		return next
	}
	return &projectOp{exprs: exprs, next: next}
}

// inputKey is uniqueKey of n where a view read through an edge is keyed as
// its running pipeline materializes it. Unlike UniqueKey it depends on
// what runs, so it may only choose how an operator keeps its state in
// memory, never a stored layout.
func (b *builder) inputKey(n plan.Node) []int {
	return uniqueKey(n, func(s *plan.Scan) []int {
		if key := TableKey(s); key != nil {
			return key
		}
		if s.Object.Kind != catalog.KindView || b.dataflow < catalog.DataflowViewEdges || s.Object.ID == b.p.id {
			return nil
		}
		b.rt.mu.Lock()
		up := b.rt.pipelines[s.Object.ID]
		b.rt.mu.Unlock()
		if up == nil || up.keyNames == nil {
			return nil
		}
		return scanColumns(s, up.keyNames)
	})
}

// addPipeline adds p, the pipeline built from spec, with its edges:
// resumed with their upstreams, or attached to running ones (see above); a
// pipeline others read that restarts brings them back too.
func (rt *Runtime) addPipeline(p *pipeline, spec viewSpec, edges []*edge) error {
	desc := spec.desc
	for _, e := range edges {
		e.idx += uint16(len(p.sources))
	}
	p.edgeIn = edges
	rt.mu.Lock()
	rt.edges.init()
	orphans := rt.edges.orphans[p.id]
	delete(rt.edges.orphans, p.id)
	if len(orphans) > 0 {
		rt.edges.holds++
	}
	resume := !rt.edges.running || rt.edges.holds > 0
	if len(edges) > 0 {
		_, attached, err := rt.store.Get(attachedMarker(p.id))
		if err != nil {
			rt.mu.Unlock()
			return err
		}
		switch {
		case !resume && attached:
			rt.mu.Unlock()
			return sqlerr.New(sqlerr.FeatureNotSupported, "materialized view %s reads other views or tables through their changes and cannot be restarted alone", desc.Name).
				WithHint("Restart the server, or drop and re-create %s.", desc.Name)
		case !resume || (!attached && !altered(p)):
			// A new view, or one restarted from a state taken before it
			// attached (a checkpoint between its CREATE and its first
			// epoch): it holds none of its upstreams' rows, and resuming
			// would give it only the changes from here on. It attaches
			// with a snapshot of its upstreams at the barrier it joins.
			// (A view an ALTER rebuilt resumes as the ALTER arranged: its
			// kept state, or its upstreams' rows at E when reread.)
			for _, e := range edges {
				e.snapReady = make(chan struct{})
			}
			rt.edges.joining[p.id] = p
		default:
			for _, e := range edges {
				if e.up.cancel != nil {
					// The upstream runs on: the changes since this view's
					// state are gone.
					rt.mu.Unlock()
					return sqlerr.New(sqlerr.FeatureNotSupported, "materialized view %s reads %s through its changes and cannot be restarted while %s runs", desc.Name, e.up.name, e.up.name).
						WithHint("Restart the server, or drop and re-create %s.", desc.Name)
				}
			}
			for _, e := range edges {
				if p.reread {
					// Every upstream holds the committed epoch this
					// pipeline resumes from, and none has taken input.
					e.snapReady = make(chan struct{})
					e.deliver(rt.store.DB().NewSnapshot())
				}
				e.up.hub.attach(e)
			}
		}
		rt.edges.specs[p.id] = spec
	}
	rt.mu.Unlock()
	if registeredHook != nil {
		registeredHook(p.id)
	}
	rt.add(p)
	if len(orphans) == 0 {
		return nil
	}
	var err error
	for _, o := range orphans {
		if err == nil {
			err = rt.StartView(o.desc, o.root, o.ups)
		}
	}
	rt.mu.Lock()
	rt.edges.holds--
	rt.startDeferredLocked()
	rt.mu.Unlock()
	return err
}

// registeredHook, set by tests, runs after addPipeline registered a
// pipeline and before it is added and started: barriers injected there
// must neither enrol nor attach it.
var registeredHook func(id uint32)

// deferLocked reports whether p's start waits for startDeferredLocked.
func (rt *Runtime) deferLocked(p *pipeline) bool {
	if rt.edges.running && rt.edges.holds == 0 {
		return false
	}
	rt.edges.deferred = append(rt.edges.deferred, p)
	return true
}

// StartDeferred starts the pipelines added since StopAll, together (a
// rollback calls it once every view is rebuilt).
func (rt *Runtime) StartDeferred() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.edges.running = true
	rt.startDeferredLocked()
}

func (rt *Runtime) startDeferredLocked() {
	if !rt.edges.running || rt.edges.holds > 0 {
		return
	}
	ps := rt.edges.deferred
	rt.edges.deferred = nil
	for _, p := range ps {
		if rt.pipelines[p.id] == p {
			rt.launchLocked(p)
		}
	}
}

// joiningLocked reports whether pipeline id waits to attach (it takes no
// part in epochs yet).
func (rt *Runtime) joiningLocked(id uint32) bool {
	_, ok := rt.edges.joining[id]
	return ok
}

// attachLocked attaches the waiting pipelines whose upstreams all take
// part in epoch e, just injected: they read what follows barrier e.
func (rt *Runtime) attachLocked(e uint64) {
	es := rt.pending[e]
	if es == nil {
		return
	}
	for id, p := range rt.edges.joining {
		if !p.launched {
			// Deferred with a group being restarted, or not yet added:
			// it would not take part in epoch e+1 (injectBarrier).
			continue
		}
		ready := true
		for _, ed := range p.edgeIn {
			if !es.waiting[ed.up.id] {
				ready = false
			}
		}
		if !ready || !joinAll(p.edgeIn, e) {
			continue // at a later barrier
		}
		rt.edges.snapshots[e] = append(rt.edges.snapshots[e], p.edgeIn...)
		rt.edges.firstEpoch[id] = e + 1
		delete(rt.edges.joining, id)
	}
}

// joinAll joins every edge to its upstream after barrier e, or none if an
// upstream has passed e already. It holds every upstream's hub lock at
// once (each hub once, in upstream id order) while it checks and joins:
// an upstream passes a barrier under its hub's lock, so none can pass e
// between the check and the join. Joined one by one, an edge could be
// taken in at e by its upstream just before another upstream refused and
// the edge was taken back: it would keep the changes and barriers after
// e for a view that attaches at a later barrier, from a snapshot of that
// later epoch, and aligns its barriers on the stale ones.
func joinAll(edges []*edge, e uint64) bool {
	hubs := make([]*pipeline, 0, len(edges))
	for _, ed := range edges {
		if !slices.Contains(hubs, ed.up) {
			hubs = append(hubs, ed.up)
		}
	}
	slices.SortFunc(hubs, func(a, b *pipeline) int { return cmp.Compare(a.id, b.id) })
	for _, up := range hubs {
		up.hub.mu.Lock()
		defer up.hub.mu.Unlock()
	}
	for _, up := range hubs {
		if up.hub.last >= e {
			return false
		}
	}
	for _, ed := range edges {
		ed.after = e
		ed.up.hub.joinLocked(ed)
	}
	return true
}

// snapshotLocked gives the edges attached at epoch e, which just
// committed, the store's state at e.
func (rt *Runtime) snapshotLocked(e uint64) {
	rt.commitSubscribersLocked(e)
	eds := rt.edges.snapshots[e]
	if eds == nil {
		return
	}
	delete(rt.edges.snapshots, e)
	for _, ed := range eds {
		ed.deliver(rt.store.DB().NewSnapshot())
	}
}

// altered reports whether p resumes after an ALTER swapped its state.
func altered(p *pipeline) bool { return p.mat != nil && p.mat.altered }

// Attaching reports whether view id still waits to hold its upstreams'
// state (it has not committed the epoch it attached at): its rows are not
// yet a result of its query.
func (rt *Runtime) Attaching(id uint32) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.pipelines[id] != nil && !rt.edgesReadyLocked(id)
}

// edgesReadyLocked reports whether pipeline id holds its upstreams'
// state: it has no edges, or committed the epoch it attached at.
func (rt *Runtime) edgesReadyLocked(id uint32) bool {
	if rt.joiningLocked(id) {
		return false
	}
	first, ok := rt.edges.firstEpoch[id]
	if !ok {
		return true
	}
	if rt.committed.Load() < first {
		return false
	}
	delete(rt.edges.firstEpoch, id)
	return true
}

// withUpstreamsLocked adds to ids every pipeline they read through edges,
// transitively: a view's epochs hold its upstreams' input, so waiting
// for its input means waiting for theirs. nil (all) stays nil.
func (rt *Runtime) withUpstreamsLocked(ids []uint32) []uint32 {
	if ids == nil {
		return nil
	}
	seen := map[uint32]bool{}
	out := append([]uint32(nil), ids...)
	for _, id := range ids {
		seen[id] = true
	}
	for i := 0; i < len(out); i++ {
		p := rt.pipelines[out[i]]
		if p == nil {
			continue
		}
		for _, e := range p.edgeIn {
			if !seen[e.up.id] {
				seen[e.up.id] = true
				out = append(out, e.up.id)
			}
		}
	}
	return out
}

// orphanLocked takes every running pipeline that reads pipeline id,
// directly or not, out of the runtime, and records how to rebuild it
// when id starts again (its state stays at the same epoch as id's). It
// returns them to stop, readers last-created first.
func (rt *Runtime) orphanLocked(id uint32) []*pipeline {
	rt.edges.init()
	var out []*pipeline
	seen := map[uint32]bool{id: true}
	var specs []viewSpec
	for changed := true; changed; {
		changed = false
		for did, p := range rt.pipelines {
			if seen[did] {
				continue
			}
			for _, e := range p.edgeIn {
				if seen[e.up.id] {
					seen[did] = true
					changed = true
					out = append(out, p)
					if s, ok := rt.edges.specs[did]; ok {
						specs = append(specs, s)
					}
					rt.forgetLocked(did)
					break
				}
			}
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].desc.ID < specs[j].desc.ID })
	if len(specs) > 0 {
		rt.edges.orphans[id] = append(rt.edges.orphans[id], specs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id > out[j].id })
	return out
}

// forgetEdgesLocked drops what the registry holds for pipeline id.
func (rt *Runtime) forgetEdgesLocked(id uint32) {
	rt.edges.init()
	delete(rt.edges.joining, id)
	delete(rt.edges.firstEpoch, id)
	delete(rt.edges.specs, id)
	for up, specs := range rt.edges.orphans {
		kept := specs[:0]
		for _, s := range specs {
			if s.desc.ID != id {
				kept = append(kept, s)
			}
		}
		rt.edges.orphans[up] = kept
	}
}

// resetEdgesLocked forgets every pipeline (StopAll): pipelines added
// from now on start with StartDeferred.
func (rt *Runtime) resetEdgesLocked() {
	rt.edges = edgeRegistry{}
	rt.edges.init()
}
