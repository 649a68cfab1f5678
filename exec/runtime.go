package exec

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/broker"
	"streamdb/metrics"
	"streamdb/storage"
)

// Runtime runs every view's pipeline and drives epochs: on each tick it
// injects barrier e into every source of every pipeline; each pipeline
// answers with one write batch for e; when all have answered, the runtime
// commits them to Pebble as one atomic batch. So Pebble always holds whole
// epochs of all views and their source positions, and SELECT (reading a
// Pebble snapshot) never sees part of an epoch.
type Runtime struct {
	store      *storage.Store
	broker     *broker.Broker
	log        *slog.Logger
	interval   time.Duration
	intervalCh chan time.Duration
	aligned    atomic.Bool
	paused     atomic.Bool
	// pauseChanged is notified when paused flips.
	pauseChanged *notifier
	// maxInflight bounds epochs injected but not committed, so a slow view
	// backs up barrier injection instead of queueing barriers unboundedly.
	maxInflight int
	// hold bounds the input of each epoch while epochs lag (input_hold.go).
	hold inputHold

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	pipelines map[uint32]*pipeline
	// failed holds views whose dataflow stopped with an error: out of the
	// epochs (so the others keep committing), kept for status and FLUSH.
	failed    map[uint32]*pipeline
	injected  uint64 // newest epoch injected
	committed atomic.Uint64
	pending   map[uint64]*epochState
	commitErr error
	// changed is closed and replaced after every commit and pipeline
	// failure, waking waiters.
	changed chan struct{}
	// groupCache bounds the aggregate groups each operator keeps in memory
	// (0: unbounded); see aggOp.
	groupCache atomic.Int64
	// joinCache bounds the join keys each join keeps in memory per side
	// (0: unbounded); see joinCache.
	joinCache atomic.Int64
	// topNCache bounds the rows each top-N over a retracting input keeps
	// in memory (0: unbounded); see topNCache.
	topNCache atomic.Int64
	// alignDrift is scan.watermark.alignment.max-drift in microseconds
	// (0: off); eventTimeMoved wakes readers held by it, and alignWaiters
	// counts them (watermark_alignment.go).
	alignDrift     atomic.Int64
	eventTimeMoved *notifier
	alignWaiters   atomic.Int32
	alignWaits     sync.Map // stream name -> *atomic.Int64, see AlignmentWaits
	// budget is state.memory.budget, shared by the caches above.
	budget memoryBudget
	// epochLimit is state.epoch.max-memory, for every view's materialize.
	epochLimit epochMemoryLimit
	// late holds each pipeline's watermark states ([]*watermarkState by
	// pipeline id), for Watermarks.
	late sync.Map

	// fenceGate is held shared by a commit that publishes to several
	// subjects (PublishFenced) and exclusively by barrier injection, so
	// that no barrier is injected between the messages of one commit.
	fenceGate sync.RWMutex
	// fences (under mu) holds, per subject, the sequence of the newest
	// message of a multi-subject commit; see PublishFenced.
	fences map[string]*fence
	// ceilings counts the ceilings inputs hold (commit_fence.go), so that
	// readers skip looking for them while there are none.
	ceilings atomic.Int64
	// ceilingPassed is notified when an input that may hold a ceiling
	// receives a barrier or leaves.
	ceilingPassed *notifier
	// stall holds epochs while the disk is full (disk_stall.go).
	stall diskStall
	// readers are the JetStream readers pipelines share (shared_source*.go).
	readers     *readerGroups
	readersOnce sync.Once
	// edges records pipelines that read others' changes (attach.go).
	edges edgeRegistry
	// txnCutters holds the cutters of Debezium transaction subjects
	// (envelope_txn.go).
	txnCutters sync.Map

	// follower, when set, decides the epochs instead of the ticker;
	// followCutters holds each subject's followed cut (epoch_follow.go).
	follower      EpochSource
	followCutters sync.Map
}

type epochState struct {
	waiting   map[uint32]bool
	batches   map[uint32]*pebble.Batch
	spills    map[uint32]*storage.Spill
	positions map[uint32][]storage.SourcePosition
}

// drop forgets pipeline id's part of the epoch.
func (es *epochState) drop(id uint32) {
	delete(es.waiting, id)
	if b := es.batches[id]; b != nil {
		b.Close()
		delete(es.batches, id)
	}
	if sp := es.spills[id]; sp != nil {
		sp.Close()
		delete(es.spills, id)
	}
	delete(es.positions, id)
}

// close releases every batch and spill of the epoch.
func (es *epochState) close() {
	for _, b := range es.batches {
		b.Close()
	}
	for _, sp := range es.spills {
		sp.Close()
	}
}

// NewRuntime creates a runtime; Start begins injecting barriers.
func NewRuntime(store *storage.Store, b *broker.Broker, log *slog.Logger, barrierInterval time.Duration) *Runtime {
	ctx, cancel := context.WithCancel(context.Background())
	rt := &Runtime{
		store: store, broker: b, log: log, interval: barrierInterval, maxInflight: 16,
		ctx: ctx, cancel: cancel,
		pipelines: map[uint32]*pipeline{}, failed: map[uint32]*pipeline{}, pending: map[uint64]*epochState{},
		fences:  map[string]*fence{},
		changed: make(chan struct{}), intervalCh: make(chan time.Duration, 1),
		pauseChanged: newNotifier(), ceilingPassed: newNotifier(), hold: inputHold{changed: newNotifier()},
		eventTimeMoved: newNotifier(),
	}
	rt.aligned.Store(true)
	rt.budget.settings = map[cacheKind]*atomic.Int64{groupCacheKind: &rt.groupCache, joinCacheKind: &rt.joinCache, topNCacheKind: &rt.topNCache}
	if e, err := store.Epoch(); err == nil {
		rt.injected = e
		rt.committed.Store(e)
	}
	return rt
}

// Start begins the barrier loop, or following the epoch source (Follow).
func (rt *Runtime) Start() {
	rt.wg.Add(1)
	rt.StartDeferred()
	if rt.follower != nil {
		go rt.follow()
		return
	}
	go func() {
		defer rt.wg.Done()
		t := time.NewTicker(rt.interval)
		defer t.Stop()
		for {
			select {
			case <-rt.ctx.Done():
				return
			case d := <-rt.intervalCh:
				t.Reset(d)
			case <-t.C:
				rt.injectBarrier()
			}
		}
	}()
}

// Close stops every pipeline. Epochs not yet committed are lost, which is
// safe: sources resume from the last committed positions.
func (rt *Runtime) Close() {
	rt.cancel()
	rt.wg.Wait()
	rt.mu.Lock()
	ps := make([]*pipeline, 0, len(rt.pipelines))
	for _, p := range rt.pipelines {
		ps = append(ps, p)
	}
	rt.pipelines = map[uint32]*pipeline{}
	for _, es := range rt.pending {
		es.close()
	}
	rt.pending = map[uint64]*epochState{}
	rt.setHoldLocked()
	rt.mu.Unlock()
	for _, p := range ps {
		p.stop()
	}
}

// CommittedEpoch is the newest epoch whose changes are visible.
func (rt *Runtime) CommittedEpoch() uint64 { return rt.committed.Load() }

func (rt *Runtime) injectBarrier() {
	rt.fenceGate.Lock()
	defer rt.fenceGate.Unlock()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.pending) >= rt.maxInflight {
		// Epochs held for disk space are retried on every tick.
		rt.tryCommitLocked()
		return
	}
	rt.injectLocked(rt.injected + 1)
}

// injectLocked injects barrier e, above every epoch injected before.
// Caller holds fenceGate and mu.
func (rt *Runtime) injectLocked(e uint64) {
	rt.injected = e
	es := &epochState{waiting: map[uint32]bool{}, batches: map[uint32]*pebble.Batch{}, spills: map[uint32]*storage.Spill{}, positions: map[uint32][]storage.SourcePosition{}}
	rt.pending[e] = es
	for _, f := range rt.fences {
		if f.epoch == 0 {
			f.epoch = e
		}
	}
	for id, p := range rt.pipelines {
		if rt.joiningLocked(id) {
			continue // attachLocked below: from epoch e+1 on
		}
		if !p.launched {
			// Deferred (attach.go): its group starts together, all in the
			// first epoch injected after. Enrolled now, it would pass
			// barrier e to the pipelines of its group added after this
			// injection, through their edges, and they would label their
			// first epoch e, which the runtime does not wait for from
			// them: it drops their batch, and with it the rows that
			// epoch brought (a reread view's whole backfill).
			continue
		}
		es.waiting[id] = true
		if p.clock != nil {
			p.clock <- e // buffered beyond maxInflight barriers: never blocks
		}
		for _, s := range p.sources {
			need := rt.fenceLocked(s.subject)
			s.asked.Store(e)
			s.askedNeed = max(s.askedNeed, need)
			req := barrierRequest{epoch: e, need: need}
			if s.cutter != nil {
				// Debezium transactions whole (envelope_txn.go).
				req.cut = s.cutter.cut.Load()
				s.addCeiling(ceiling{floor: req.cut, epoch: e})
			}
			s.barriers <- req // buffered beyond maxInflight barriers: never blocks
		}
	}
	rt.attachLocked(e)
	rt.tryCommitLocked()
	rt.setHoldLocked()
	rt.budget.rebalance()
}

// ack receives pipeline p's batch for epoch e.
func (rt *Runtime) ack(p *pipeline, e uint64, b *pebble.Batch, sp *storage.Spill, pos []storage.SourcePosition) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	es, ok := rt.pending[e]
	if !ok || !es.waiting[p.id] || rt.pipelines[p.id] != p {
		b.Close() // a dropped pipeline, or a stale epoch
		sp.Close()
		return
	}
	delete(es.waiting, p.id)
	es.batches[p.id] = b
	if sp != nil {
		es.spills[p.id] = sp
	}
	es.positions[p.id] = pos
	rt.tryCommitLocked()
}

// tryCommitLocked commits complete epochs in order.
func (rt *Runtime) tryCommitLocked() {
	for {
		next := rt.committed.Load() + 1
		if rt.follower != nil {
			next = rt.oldestPendingLocked()
		}
		es, ok := rt.pending[next]
		if !ok || len(es.waiting) > 0 || rt.holdForSpace() {
			return
		}
		delete(rt.pending, next)
		start := time.Now()
		if err := rt.commit(next, es); err != nil {
			rt.commitErr = err
			rt.log.Error("epoch commit failed", "epoch", next, "err", err)
			return
		}
		rt.snapshotLocked(next)
		for id, pos := range es.positions {
			if p := rt.pipelines[id]; p != nil {
				p.mu.Lock()
				p.committed = pos
				p.mu.Unlock()
			}
		}
		rt.committed.Store(next)
		metrics.EpochsCommitted.Inc()
		metrics.EpochCommitSeconds.Observe(time.Since(start).Seconds())
		for subj, f := range rt.fences {
			if f.epoch != 0 && f.epoch <= next {
				delete(rt.fences, subj)
			}
		}
		rt.notifyLocked()
	}
}

func (rt *Runtime) commit(e uint64, es *epochState) error {
	if len(es.batches) == 1 && len(es.spills) == 0 {
		// One pipeline: commit its batch itself rather than a copy.
		for _, pb := range es.batches {
			defer pb.Close()
			if err := storage.PutEpoch(pb, e); err != nil {
				return err
			}
			return rt.store.Commit(pb, false)
		}
	}
	// The others are copied into the largest (pipelines write disjoint
	// keys, so the order does not matter).
	var b *pebble.Batch
	for _, pb := range es.batches {
		if b == nil || pb.Len() > b.Len() {
			b = pb
		}
	}
	if b == nil {
		b = rt.store.NewBatch()
	}
	defer b.Close()
	for _, pb := range es.batches {
		if pb == b {
			continue
		}
		err := b.Apply(pb, nil)
		pb.Close()
		if err != nil {
			return err
		}
	}
	if err := storage.PutEpoch(b, e); err != nil {
		return err
	}
	if len(es.spills) == 0 {
		return rt.store.Commit(b, false)
	}
	// Spilled writes are older than their pipeline's batch; pipelines
	// write disjoint keys, so the order among spills does not matter.
	spills := make([]*storage.Spill, 0, len(es.spills))
	for _, sp := range es.spills {
		spills = append(spills, sp)
		defer sp.Close()
	}
	return rt.store.CommitSpilled(b, spills)
}

func (rt *Runtime) notifyLocked() {
	close(rt.changed)
	rt.changed = make(chan struct{})
}

// Add starts p as part of the next epoch.
func (rt *Runtime) add(p *pipeline) {
	if p.errs == nil {
		p.errs = newViewErrors(rt.store, p.id, p.name, p.log)
	}
	attachViewErrors(p.allHeads(), p.errs)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	p.rt = rt
	rt.pipelines[p.id] = p
	rt.recountCachesLocked()
	if !rt.deferLocked(p) {
		rt.launchLocked(p)
	}
}

// launchLocked starts p and takes it out of the epochs if it fails.
func (rt *Runtime) launchLocked(p *pipeline) {
	p.launched = true
	p.start(rt.ctx)
	go func() {
		<-p.done
		rt.mu.Lock()
		if rt.pipelines[p.id] == p && p.err != nil {
			// Take the failed view out of every epoch so that the other
			// views keep committing.
			delete(rt.pipelines, p.id)
			rt.recountCachesLocked()
			rt.failed[p.id] = p
			for _, es := range rt.pending {
				es.drop(p.id)
			}
			rt.tryCommitLocked()
		}
		rt.notifyLocked()
		rt.mu.Unlock()
	}()
}

// Remove stops the pipeline of view id and forgets its pending batches.
// Pipelines that read it stop too, until it starts again (attach.go).
func (rt *Runtime) Remove(id uint32) {
	rt.mu.Lock()
	p := rt.pipelines[id]
	readers := rt.orphanLocked(id)
	rt.forgetEdgesLocked(id)
	rt.forgetLocked(id)
	rt.tryCommitLocked()
	rt.mu.Unlock()
	for _, r := range readers {
		r.stop()
	}
	if p != nil {
		p.stop()
		metrics.ForgetView(p.name)
		forgetCacheFigures(id)
	}
}

// forgetLocked takes pipeline id out of the runtime and its pending epochs.
func (rt *Runtime) forgetLocked(id uint32) {
	delete(rt.pipelines, id)
	rt.recountCachesLocked()
	delete(rt.failed, id)
	rt.late.Delete(id)
	for _, es := range rt.pending {
		es.drop(id)
	}
}

// Target is a position a view must reach: the JetStream sequence of the
// newest message on a source's subject.
type Target struct {
	JSStream string
	Subject  string
	Seq      uint64
}

// Targets reads the current end of each distinct subject the given views
// read (all views when ids is nil).
func (rt *Runtime) Targets(ctx context.Context, ids []uint32) (map[string]uint64, error) {
	rt.mu.Lock()
	subjects := map[string]string{} // subject -> js stream
	ids = rt.withUpstreamsLocked(ids)
	for id, p := range rt.pipelines {
		if ids != nil && !contains(ids, id) {
			continue
		}
		for _, s := range p.sources {
			subjects[s.subject] = s.jsStream
		}
	}
	rt.mu.Unlock()
	out := map[string]uint64{}
	for subj, js := range subjects {
		seq, err := rt.broker.LastSeqForSubject(ctx, js, subj)
		if err != nil {
			return nil, fmt.Errorf("read end of subject %s: %w", subj, err)
		}
		out[subj] = seq
	}
	return out, nil
}

// WaitFor blocks until every listed view (all when ids is nil) has committed
// an epoch whose source positions reach targets (subject -> sequence). A
// view that fails returns its error (ViewFailure's).
func (rt *Runtime) WaitFor(ctx context.Context, ids []uint32, targets map[string]uint64) error {
	return rt.waitFor(ctx, ids, targets, false)
}

// WaitForRunning blocks until every view still running has committed an
// epoch whose source positions reach targets. Views that have stopped,
// before or while it waits, are left out (FLUSH: one failed view must not
// fail every session's FLUSH); it returns the names of those that stopped.
func (rt *Runtime) WaitForRunning(ctx context.Context, targets map[string]uint64) ([]string, error) {
	if err := rt.waitFor(ctx, nil, targets, true); err != nil {
		return nil, err
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var failed []string
	for _, p := range rt.failed {
		failed = append(failed, p.name)
	}
	sort.Strings(failed)
	return failed, nil
}

func (rt *Runtime) waitFor(ctx context.Context, ids []uint32, targets map[string]uint64, skipFailed bool) error {
	for {
		rt.mu.Lock()
		done := true
		var failed error
		want := rt.withUpstreamsLocked(ids)
		for id, p := range rt.pipelines {
			if want != nil && !contains(want, id) {
				continue
			}
			if !rt.edgesReadyLocked(id) {
				done = false
			}
			select {
			case <-p.done:
				switch {
				case skipFailed:
					continue
				case p.err != nil:
					failed = rt.failureError(p)
				default:
					failed = fmt.Errorf("view %s stopped", p.name)
				}
			default:
			}
			if p.mat != nil && !p.mat.alterVisible(rt.committed.Load()) {
				done = false // an altered view's first epoch is not committed yet
			}
			p.mu.Lock()
			for i, s := range p.sources {
				want := SubjectTarget(targets, s.subject)
				if want > 0 && (i >= len(p.committed) || p.committed[i].Seq < want) {
					done = false
				}
			}
			p.mu.Unlock()
		}
		for id, p := range rt.failed {
			if !skipFailed && (ids == nil || contains(ids, id)) {
				failed = rt.failureError(p)
			}
		}
		ch := rt.changed
		commitErr := rt.commitErr
		rt.mu.Unlock()
		switch {
		case failed != nil:
			return failed
		case commitErr != nil:
			return commitErr
		case !done && rt.Stalled() != nil:
			// Nothing commits until space is freed: say so now.
			return rt.Stalled()
		case done:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// SkippedMessages returns, per SQL stream name, the most malformed messages
// any view's reader of it has skipped.
func (rt *Runtime) SkippedMessages() map[string]uint64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := map[string]uint64{}
	for _, p := range rt.pipelines {
		for _, s := range p.sources {
			out[s.name] = max(out[s.name], s.skippedTotal.Load())
		}
	}
	return out
}

// NoColumnMessages returns, per SQL stream name, how many of the messages
// its readers decoded since they started name none of its columns (read
// as rows of NULLs): the most any of its readers counted.
func (rt *Runtime) NoColumnMessages() map[string]uint64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := map[string]uint64{}
	for _, p := range rt.pipelines {
		for _, s := range p.sources {
			s.smu.Lock()
			r := s.reader
			s.smu.Unlock()
			if r != nil && !r.table {
				out[s.name] = max(out[s.name], r.noColumn.Load())
			}
		}
	}
	return out
}

func contains(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// ViewPosition is where one source of a view's (or table's) pipeline
// stands in a committed epoch: the last JetStream sequence of its subject
// that the state holds.
type ViewPosition struct {
	ViewID  uint32
	View    string
	Source  int
	Stream  string
	Subject string
	Seq     uint64
}

// Cut is the newest committed epoch and every source's position in it:
// what a checkpoint taken at an epoch boundary captures.
type Cut struct {
	Epoch     uint64
	Positions []ViewPosition
}

// AtEpochBoundary runs fn while no epoch commits: the store then holds
// exactly the epochs up to cut.Epoch, so a Pebble checkpoint taken inside fn
// is a consistent cut of all views and sources. Processing goes on; only
// commits wait (and barrier injection, once maxInflight epochs are pending).
func (rt *Runtime) AtEpochBoundary(fn func(cut Cut) error) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return fn(Cut{Epoch: rt.committed.Load(), Positions: rt.positionsLocked()})
}

// SetAligned chooses exactly-once (aligned barriers, true) or at-least-once
// (no alignment) processing for pipelines started from now on.
func (rt *Runtime) SetAligned(aligned bool) { rt.aligned.Store(aligned) }

// SetGroupCache sets how many aggregate groups each operator keeps in
// memory (0: all of them); operators apply it at their next barrier.
func (rt *Runtime) SetGroupCache(n int64) { rt.groupCache.Store(n) }

// SetTopNCache sets state.cache.topn-rows-per-operator: the rows each
// top-N over a retracting input keeps in memory (0: all). A top-N started
// with 0 keeps everything until the view restarts.
func (rt *Runtime) SetTopNCache(n int64) { rt.topNCache.Store(n) }

// SetInterval changes the barrier interval.
func (rt *Runtime) SetInterval(d time.Duration) {
	if d <= 0 {
		return
	}
	for {
		select {
		case rt.intervalCh <- d:
			return
		case <-rt.intervalCh: // replace a change not yet applied
		}
	}
}

// ViewStatus is "running", or "failed: <error>" for a view whose dataflow
// stopped (its last committed state stays readable).
func (rt *Runtime) ViewStatus(id uint32) string {
	rt.mu.Lock()
	p := rt.pipelines[id]
	if p == nil {
		p = rt.failed[id]
	}
	rt.mu.Unlock()
	if p == nil {
		return "stopped"
	}
	select {
	case <-p.done:
		if p.err != nil {
			return "failed: " + p.err.Error()
		}
		return "stopped"
	default:
		return "running"
	}
}

// StopAll stops every pipeline and drops uncommitted epochs (rollback
// replaces the state they would have changed).
func (rt *Runtime) StopAll() {
	rt.mu.Lock()
	ps := make([]*pipeline, 0, len(rt.pipelines))
	for _, p := range rt.pipelines {
		ps = append(ps, p)
	}
	rt.pipelines = map[uint32]*pipeline{}
	rt.recountCachesLocked()
	rt.failed = map[uint32]*pipeline{}
	rt.resetEdgesLocked()
	for e, es := range rt.pending {
		es.close()
		delete(rt.pending, e)
	}
	// Epochs injected but not committed will never complete: skip them.
	rt.committed.Store(rt.injected)
	rt.setHoldLocked()
	rt.notifyLocked()
	rt.mu.Unlock()
	// Cancel every pipeline before waiting for any: one still running
	// when a pipeline it reads has stopped fails with that as its error.
	for _, p := range ps {
		if p.cancel != nil {
			p.cancel()
		}
	}
	for _, p := range ps {
		p.stop()
	}
}

// SetPaused stops (true) or restarts (false) reading from every source;
// barriers and checkpoints go on.
func (rt *Runtime) SetPaused(paused bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.paused.Store(paused)
	rt.pauseChanged.notify()
}

// Paused reports whether sources are paused.
func (rt *Runtime) Paused() bool { return rt.paused.Load() }

func (rt *Runtime) pauseSignal() <-chan struct{} { return rt.pauseChanged.wait() }
