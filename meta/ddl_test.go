package meta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// TestDDLDataDriven applies DDL to hand-built plans through meta.DDL over
// a real catalog and state store and fakes of the runtime, JetStream's
// stream ends, the node and the coordinator (testdata/ddl). After every
// command it checks that ddlMu is free (unless hold-ddl took it) and
// that the live catalog agrees with the stored one. Commands:
//
//	stream name=S first=F last=L [table]
//	                                 create stream (or table) S, its JetStream
//	                                 stream holding sequences F..L (0 0: empty)
//	view name=V reads=S [agg=A] [group=C] [fail-start] [unpopulated]
//	                                 InstallView of V over S (A: count, sum;
//	                                 C: k or x); unpopulated stores it as
//	                                 CREATE ... WITH NO DATA does
//	refresh name=V [fail-start]      InstallView of V's plan in place of
//	                                 unpopulated V
//	commit name=V seq=N              V's dataflow commits up to N
//	progress name=V                  PopulatingProgress
//	backfill name=V [paused] [stop] [cancel] [refresh]
//	                                 Backfill (stop: the view fails during it;
//	                                 refresh: abandon with Unpopulate)
//	alter name=V [agg=A] [group=C] [allow] [gone]
//	                                 PlanAlter (gone: JetStream dropped the
//	                                 start of the history) and its EXPLAIN
//	swap name=V [agg=A] [group=C] [allow]
//	                                 PlanAlter, then SwapView
//	drop name=N [delete-on-cancellation]
//	                                 DropCascade with N's dependents
//	jetstream ..., source ...        CREATE STREAM and CREATE TABLE
//	                                 (CreateSource; runSource says how)
//	index ..., drop-index ...        CREATE and DROP INDEX (runIndex)
//	sequence ..., alter-sequence ... CREATE and ALTER SEQUENCE
//	                                 (runSequence says how)
//	hold-ddl, release-ddl            take and release ddlMu
//	catalog                          the stored catalog
//
// Regenerate with `go test ./meta -run DDLDataDriven -rewrite`.
func TestDDLDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/ddl", func(t *testing.T, path string) {
		env := newDDLEnv(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out := env.run(t, d)
			if !env.held {
				if !env.ddlMu.TryLock() {
					t.Fatalf("%s: ddlMu is still held after the command", d.Pos)
				}
				env.ddlMu.Unlock()
			}
			env.checkLive(t)
			return out
		})
	})
}

type ddlEnv struct {
	store     *storage.Store
	binder    *fakeBinder
	seqValues *fakeSeqValues
	collector *fakeCollector
	cat       *Catalog
	live      *fakeLive
	rt        *fakeDataflows
	ends      *fakeEnds
	node      *fakeDDLNode
	coord     *fakeDDLCoord
	dropped   *DroppedStreams
	ddl       *DDL
	ddlMu     sync.Mutex
	stateMu   sync.RWMutex
	held      bool
	// roots are the plans the views were installed with, by name.
	roots map[string]plan.Node
}

func newDDLEnv(t *testing.T) *ddlEnv {
	st, cat := openCatalogStore(t, filepath.Join(t.TempDir(), "state"))
	t.Cleanup(func() { st.Close() })
	env := &ddlEnv{store: st, cat: cat, live: &fakeLive{objs: map[string]*catalog.Descriptor{}},
		rt: &fakeDataflows{running: map[uint32]plan.Node{}, failed: map[uint32]error{}}, ends: &fakeEnds{first: map[string]uint64{}, last: map[string]uint64{}},
		node: &fakeDDLNode{retain: true}, coord: &fakeDDLCoord{}, roots: map[string]plan.Node{}}
	env.dropped = NewDroppedStreams(DroppedStreamsConfig{DataDir: t.TempDir(), Log: slog.New(slog.DiscardHandler)})
	env.collector = &fakeCollector{DroppedStreams: env.dropped}
	env.seqValues = &fakeSeqValues{}
	env.binder = &fakeBinder{bySubject: map[string]string{}, last: map[string]uint64{}}
	env.ddl = NewDDL(DDLConfig{Catalog: cat, Live: env.live, Runtime: env.rt, Streams: env.ends, Binder: env.binder, Sequences: env.seqValues, State: NewState(st),
		Node: env.node, Coord: env.coord, Dropped: env.collector, Log: slog.New(slog.DiscardHandler),
		StreamMadeAnew: func(subject string) { env.binder.madeAnew = append(env.binder.madeAnew, subject) },
		DDLMu:          &env.ddlMu, StateMu: &env.stateMu,
		Bind: func(string) (plan.Node, error) { return nil, errors.New("no binder in this test") },
		Wait: env.wait,
		Reload: func() error {
			env.rt.reloads++
			ds, err := storage.Descriptors(st.DB())
			if err != nil {
				return err
			}
			// As sql's loadCatalog, the live catalog is built afresh (a
			// renamed object leaves its old name).
			env.live.mu.Lock()
			env.live.objs = map[string]*catalog.Descriptor{}
			env.live.mu.Unlock()
			for _, d := range ds {
				env.live.Set(d)
				if root, ok := env.roots[d.Name]; ok && d.Kind == catalog.KindView {
					env.rt.running[d.ID] = root
				}
			}
			return nil
		},
		ResetTables: func() {},
	})
	return env
}

func (env *ddlEnv) run(t *testing.T, d *datadriven.TestData) string {
	ctx := context.Background()
	name := ""
	if d.HasArg("name") {
		d.ScanArgs(t, "name", &name)
	}
	switch d.Cmd {
	case "stream":
		var first, last uint64
		d.ScanArgs(t, "first", &first)
		d.ScanArgs(t, "last", &last)
		kind := catalog.KindStream
		if d.HasArg("table") {
			kind = catalog.KindTable
		}
		s := &catalog.Descriptor{Name: name, Kind: kind, Subject: name, JSStream: strings.ToUpper(name),
			Columns: catalog.ColumnsFrom([]types.Column{{Name: "k", Type: types.Int8}, {Name: "x", Type: types.Int8}})}
		if err := env.ddl.Create(s); err != nil {
			return errLine(err)
		}
		env.ends.first[name], env.ends.last[name] = first, last
		return fmt.Sprintf("%s: %s id=%d\n", name, kind, s.ID)
	case "view":
		v, root := env.viewPlan(t, d, name)
		if d.HasArg("unpopulated") {
			v.Kind, v.Dataflow = catalog.KindUnpopulatedView, 0
			if err := env.ddl.Create(v); err != nil {
				return errLine(err)
			}
			env.roots[name] = root
			return fmt.Sprintf("%s: unpopulated id=%d\n", name, v.ID)
		}
		env.rt.failStart = d.HasArg("fail-start")
		if err := env.ddl.InstallView(ctx, v, root, nil); err != nil {
			return errLine(err)
		}
		env.roots[name] = root
		return env.describe(v)
	case "refresh":
		u, ok := env.live.Lookup(name)
		if !ok {
			return "no such view\n"
		}
		v := *u
		v.Kind, v.Dataflow, v.ID = catalog.KindView, catalog.DataflowLatest, 0
		env.rt.failStart = d.HasArg("fail-start")
		if err := env.ddl.InstallView(ctx, &v, env.roots[name], u); err != nil {
			return errLine(err)
		}
		return env.describe(&v)
	case "commit":
		var seq uint64
		d.ScanArgs(t, "seq", &seq)
		v := env.lookup(t, name)
		if err := env.ddl.cfg.State.MovePositions(v.ID, []uint16{0}, seq); err != nil {
			return errLine(err)
		}
		return "ok\n"
	case "progress":
		done, total, ok := env.ddl.PopulatingProgress(env.lookup(t, name))
		if !ok {
			return "populated; flag stored: " + env.storedFlag(t, name) + "\n"
		}
		return fmt.Sprintf("populating: %d of %d; flag stored: %s\n", done, total, env.storedFlag(t, name))
	case "backfill":
		v := env.lookup(t, name)
		env.rt.paused = d.HasArg("paused")
		env.rt.stopDuringWait = d.HasArg("stop")
		bctx := ctx
		if d.HasArg("cancel") {
			c, cancel := context.WithCancel(ctx)
			cancel()
			bctx = c
		}
		abandon := env.ddl.AbandonView
		if d.HasArg("refresh") {
			u := *v
			u.Kind, u.Dataflow, u.Options = catalog.KindUnpopulatedView, 0, nil
			abandon = func(ctx context.Context, d *catalog.Descriptor) { env.ddl.Unpopulate(ctx, d, &u) }
		}
		before := env.node.checkpoints
		backfilled, err := env.ddl.Backfill(bctx, v, abandon)
		var sb strings.Builder
		if err != nil {
			sb.WriteString(errLine(err))
		} else {
			fmt.Fprintf(&sb, "backfilled: %t\n", backfilled)
		}
		fmt.Fprintf(&sb, "checkpoints: %d\n", env.node.checkpoints-before)
		sb.WriteString(env.listCatalog(t))
		return sb.String()
	case "alter", "swap":
		old := env.lookup(t, name)
		nv, root := env.viewPlan(t, d, name)
		nv.ID, nv.Dataflow, nv.CreatedAt = old.ID, old.Dataflow, old.CreatedAt
		env.ends.gone = d.HasArg("gone")
		a, err := env.ddl.PlanAlter(ctx, old, nv, root, d.HasArg("allow"))
		if err != nil {
			return errLine(err)
		}
		out := strings.Join(a.Explain(), "\n") + "\n"
		if d.Cmd == "alter" {
			return out
		}
		if err := a.Refusal(); err != nil {
			return out + errLine(err)
		}
		env.roots[name] = root // the dataflow Reload starts
		if err := env.ddl.SwapView(ctx, a); err != nil {
			return out + errLine(err)
		}
		cur := env.lookup(t, name)
		return out + fmt.Sprintf("swapped: op state %v, next op %d, populating=%s, reloads %d\n",
			cur.OpState, cur.NextOp, orNone(cur.Options[PopulatingOption]), env.rt.reloads)
	case "drop":
		obj := env.lookup(t, name)
		var deps []*catalog.Descriptor
		for _, o := range env.live.all() {
			for _, dep := range o.DependsOn {
				if dep == name {
					deps = append(deps, o)
				}
			}
		}
		env.node.retain = !d.HasArg("delete-on-cancellation")
		deleted := env.coord.deleted
		if err := env.ddl.DropCascade(DropPlan{Object: obj, Dependents: deps}); err != nil {
			return errLine(err)
		}
		collect := env.dropped.PendingCollides(obj.Subject)
		removed := make([]string, 0, len(env.rt.removed))
		for _, id := range env.rt.removed {
			removed = append(removed, fmt.Sprint(id))
		}
		env.rt.removed = nil
		return fmt.Sprintf("dataflows removed: [%s]; JetStream stream collected: %t; checkpoints deleted: %d\n%s",
			strings.Join(removed, " "), collect, env.coord.deleted-deleted, env.listCatalog(t))
	case "jetstream", "source":
		return env.runSource(t, d, name)
	case "index", "drop-index":
		return env.runIndex(t, d, name)
	case "sequence", "alter-sequence":
		return env.runSequence(t, d, name)
	case "hold-ddl":
		env.ddlMu.Lock()
		env.held = true
		return "ok\n"
	case "release-ddl":
		env.held = false
		env.ddlMu.Unlock()
		return "ok\n"
	case "catalog":
		return env.listCatalog(t)
	}
	t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
	return ""
}

// viewPlan builds view name's descriptor and plan over the stream its
// reads argument names: a scan, or an aggregate of it.
func (env *ddlEnv) viewPlan(t *testing.T, d *datadriven.TestData, name string) (*catalog.Descriptor, plan.Node) {
	var reads string
	if d.HasArg("reads") {
		d.ScanArgs(t, "reads", &reads)
	} else {
		reads = env.lookup(t, name).DependsOn[0]
	}
	src := env.lookup(t, reads)
	cols, err := src.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var root plan.Node = &plan.Scan{Object: src, Cols: cols}
	if d.HasArg("agg") {
		var agg, group string
		d.ScanArgs(t, "agg", &agg)
		if d.HasArg("group") {
			d.ScanArgs(t, "group", &group)
		}
		a := &plan.Aggregate{Input: root}
		if group != "" {
			idx := map[string]int{"k": 0, "x": 1}[group]
			a.GroupBy = []expr.Expr{&expr.ColRef{Idx: idx, Name: group, T: types.Int8}}
			a.Cols = append(a.Cols, types.Column{Name: group, Type: types.Int8})
		}
		call := plan.AggCall{Func: agg, T: types.Int8}
		if agg != "count" {
			call.Arg = &expr.ColRef{Idx: 1, Name: "x", T: types.Int8}
			call.T = types.Numeric
		}
		a.Aggs = []plan.AggCall{call}
		a.Cols = append(a.Cols, types.Column{Name: agg, Type: call.T})
		root = a
	}
	v := &catalog.Descriptor{Name: name, Kind: catalog.KindView, Columns: catalog.ColumnsFrom(root.Schema()),
		DependsOn: []string{reads}, Dataflow: catalog.DataflowLatest}
	return v, root
}

func (env *ddlEnv) lookup(t *testing.T, name string) *catalog.Descriptor {
	d, ok := env.live.Lookup(name)
	if !ok {
		t.Fatalf("no object %s", name)
	}
	return d
}

// describe renders an installed view: its populating flag, its stored
// start positions and whether its dataflow runs.
func (env *ddlEnv) describe(v *catalog.Descriptor) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: view id=%d populating=%s\n", v.Name, v.ID, orNone(v.Options[PopulatingOption]))
	pos, err := env.ddl.cfg.State.Position(v.ID, 0)
	if err != nil {
		return errLine(err)
	}
	_, running := env.rt.running[v.ID]
	fmt.Fprintf(&sb, "start position: %d; running: %t\n", pos.Seq, running)
	return sb.String()
}

// storedFlag is the populating flag of the stored descriptor of name.
func (env *ddlEnv) storedFlag(t *testing.T, name string) string {
	return orNone(storedNames(t, env.store)[name].Options[PopulatingOption])
}

// listCatalog lists the stored catalog, one object a line by name.
func (env *ddlEnv) listCatalog(t *testing.T) string {
	stored := storedNames(t, env.store)
	names := make([]string, 0, len(stored))
	for n := range stored {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString("catalog:")
	for _, n := range names {
		fmt.Fprintf(&sb, " %s(%s %d)", n, stored[n].Kind, stored[n].ID)
	}
	sb.WriteString("\n")
	return sb.String()
}

// checkLive fails the test unless the live catalog holds the stored
// descriptors: the same names, kinds, ids and populating flags.
func (env *ddlEnv) checkLive(t *testing.T) {
	t.Helper()
	stored := storedNames(t, env.store)
	live := env.live.all()
	if len(live) != len(stored) {
		t.Fatalf("live catalog has %d objects, stored %d", len(live), len(stored))
	}
	for _, d := range live {
		s, ok := stored[d.Name]
		if !ok || s.Kind != d.Kind || s.ID != d.ID || s.Options[PopulatingOption] != d.Options[PopulatingOption] {
			t.Fatalf("live %s (%s %d) differs from the stored one", d.Name, d.Kind, d.ID)
		}
	}
}

// wait is the backfill's wait: the view's dataflow stops during it when
// the test says so, and a canceled statement ends it.
func (env *ddlEnv) wait(ctx context.Context, ids []uint32, _ map[string]uint64, _ string) error {
	if ctx.Err() != nil {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	if env.rt.stopDuringWait {
		err := sqlerr.New(sqlerr.DataException, "materialized view stopped: row failed")
		env.rt.failed[ids[0]] = err
		return err
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func errLine(err error) string {
	e := sqlerr.From(err)
	return fmt.Sprintf("error %s: %s\n", e.Code, e.Message)
}

type fakeLive struct {
	mu   sync.Mutex
	objs map[string]*catalog.Descriptor
}

func (l *fakeLive) Lookup(name string) (*catalog.Descriptor, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.objs[name]
	return d, ok
}

func (l *fakeLive) Set(d *catalog.Descriptor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.objs[d.Name] = d
}

func (l *fakeLive) Delete(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.objs, name)
}

func (l *fakeLive) Swap(cur, next *catalog.Descriptor) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.objs[cur.Name] != cur {
		return false
	}
	l.objs[cur.Name] = next
	return true
}

func (l *fakeLive) Objects() []*catalog.Descriptor { return l.all() }

func (l *fakeLive) all() []*catalog.Descriptor {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*catalog.Descriptor, 0, len(l.objs))
	for _, d := range l.objs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// fakeDataflows runs no dataflow: it records which views run, with the
// layout the runtime would give their streaming plans.
type fakeDataflows struct {
	running        map[uint32]plan.Node
	failed         map[uint32]error
	removed        []uint32
	failStart      bool
	paused         bool
	stopDuringWait bool
	reloads        int
}

func (r *fakeDataflows) StartView(d *catalog.Descriptor, root plan.Node, _ exec.UpstreamPlans) error {
	if r.failStart {
		return sqlerr.New(sqlerr.InternalError, "dataflow of %s failed to start", d.Name)
	}
	r.running[d.ID] = root
	return nil
}

func (r *fakeDataflows) Remove(id uint32) {
	delete(r.running, id)
	r.removed = append(r.removed, id)
}

func (r *fakeDataflows) Paused() bool { return r.paused }

func (r *fakeDataflows) Targets(context.Context, []uint32) (map[string]uint64, error) {
	return map[string]uint64{}, nil
}

func (r *fakeDataflows) ViewFailure(id uint32) error { return r.failed[id] }
func (r *fakeDataflows) Attaching(uint32) bool       { return false }
func (r *fakeDataflows) ViewStatus(uint32) string    { return "running" }

// Layout numbers the stateful operators of the view's streaming plan
// from exec.FirstOperatorIndex, one state table each, as the runtime
// does for a new view.
func (r *fakeDataflows) Layout(id uint32) (*exec.ViewLayout, bool) {
	root, ok := r.running[id]
	if !ok {
		return nil, false
	}
	stream := plan.RewriteStreaming(root, catalog.DataflowLatest, nil)
	l := &exec.ViewLayout{Root: stream, Dataflow: catalog.DataflowLatest, NextOp: exec.FirstOperatorIndex}
	ids, _ := plan.NodeIDs(stream)
	for _, n := range plan.StatefulNodes(stream) {
		l.Slots = append(l.Slots, exec.OpSlot{Node: n, ID: ids[n], Indexes: []uint16{l.NextOp}})
		l.NextOp++
	}
	for _, s := range plan.Scans(stream) {
		l.Sources = append(l.Sources, s.Object.Name)
	}
	return l, true
}

func (r *fakeDataflows) StopAll()       { r.running = map[uint32]plan.Node{} }
func (r *fakeDataflows) StartDeferred() {}

// fakeEnds are the JetStream streams' first sequences and their
// subjects' last; gone makes every stream start after its history.
type fakeEnds struct {
	first, last map[string]uint64
	gone        bool
}

func (e *fakeEnds) First(_ context.Context, d *catalog.Descriptor) (uint64, error) {
	if e.gone {
		return e.first[d.Name] + 100, nil
	}
	return e.first[d.Name], nil
}

func (e *fakeEnds) LastOnSubject(_ context.Context, d *catalog.Descriptor) (uint64, error) {
	return e.last[d.Name], nil
}

type fakeDDLNode struct {
	checkpoints int
	retain      bool
}

func (n *fakeDDLNode) CheckpointDDL(context.Context) error { n.checkpoints++; return nil }
func (n *fakeDDLNode) CheckpointSettings() checkpoint.Settings {
	return checkpoint.Settings{RetainOnCancellation: n.retain}
}

type fakeDDLCoord struct{ deleted int }

func (c *fakeDDLCoord) Exclusive(fn func() error) error { return fn() }
func (c *fakeDDLCoord) DeleteAll()                      { c.deleted++ }
