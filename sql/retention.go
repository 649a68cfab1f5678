package sql

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/exec"
)

// After each checkpoint the server purges, from each table's changelog
// (and from each stream created WITH (retention = 'consumed')), the
// messages nothing can need any more. A message on subject S is kept when
// its sequence is above the lowest of:
//
//   - the committed position on S of every view and table pipeline, running
//     or stopped (a stopped view restarts from its stored position);
//   - the position on S of every completed checkpoint and savepoint in any
//     directory the server has used (recovery, ROLLBACK TO and
//     --restore-from replay from there);
//   - for a table WITH (history = 'w'), the first message stored within w
//     of now.
//
// A subject nobody reads yet keeps everything. The positions are read
// while no checkpoint is being taken and under ddlMu (no view is being
// created, moved or rolled back), and every position read later only
// grows, so a checkpoint begun after the purge never needs what it
// removed. A subject is purged only when its JetStream stream holds it
// alone: readers detect lost input by the stream's first sequence, which
// a purge of one subject among several would not move.

// newViewsReplayTable reports whether a view created now over table d
// would read d's changelog through a JetStream reader of its own, from
// the table's first message: then d's changelog may not be purged, as the
// new view would miss the purged changes. A view that starts from the
// table's state reads no changelog of its own, and the runtime then lists
// no source on the table for it.
func (e *Engine) newViewsReplayTable(d *catalog.Descriptor) bool {
	root, err := tableScan(d)
	if err != nil {
		return true
	}
	probe := &catalog.Descriptor{Name: d.Name + "_probe", Kind: catalog.KindView, Dataflow: catalog.DataflowLatest}
	streams, err := e.sourceStreams(probe, root)
	return err != nil || slices.Contains(streams, d.Name)
}

// purger runs purges one at a time, off the checkpoint's goroutine.
type purger struct {
	mu      sync.Mutex
	running bool
	pending bool
	closed  bool
	done    chan struct{} // closed when the running purge loop ends

	// toldKept is set once the log has said that tables' changelogs are
	// kept whole (newViewsReplayTable).
	toldKept atomic.Bool
}

// tablesKeptMessage is logged once when new views over tables would replay
// their changelogs, so that none is purged.
const tablesKeptMessage = "tables' changelogs are kept whole: a new view over a table replays its changelog from the start"

// startPurging has a purge follow every completed checkpoint.
func (e *Engine) startPurging() {
	e.coord.SetAfterCheckpoint(func(*checkpoint.Meta) { e.schedulePurge() })
}

// schedulePurge asks for a purge; one runs soon unless the engine is
// closing (requests made while one runs are merged into one more).
func (e *Engine) schedulePurge() {
	p := &e.purge
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.pending = true
	if p.running {
		return
	}
	p.running = true
	p.done = make(chan struct{})
	go func() {
		for {
			p.mu.Lock()
			if !p.pending || p.closed {
				p.running = false
				close(p.done)
				p.mu.Unlock()
				return
			}
			p.pending = false
			p.mu.Unlock()
			e.purgeOnce()
		}
	}()
}

// stopPurging waits for a running purge and refuses new ones.
func (e *Engine) stopPurging() {
	p := &e.purge
	p.mu.Lock()
	p.closed = true
	done := p.done
	running := p.running
	p.mu.Unlock()
	if running {
		<-done
	}
}

// purgeTarget is one subject that may be purged.
type purgeTarget struct {
	jsStream string
	subject  string
	objects  []string      // the SQL streams or the table on it
	history  time.Duration // kept whatever else needs it; 0: none
}

// purgeOnce purges every target below what is still needed.
func (e *Engine) purgeOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	// Transactions whose references the purge removed go with them.
	defer e.removeTxns(ctx)
	targets := e.purgeTargets(ctx)
	if len(targets) == 0 {
		return
	}
	var live []exec.ViewPosition
	var retained []checkpoint.Position
	err := e.coord.Exclusive(func() error {
		var err error
		live = e.rt.Positions()
		retained, err = e.coord.RetainedPositions()
		return err
	})
	if err != nil {
		e.log.Warn("changelog purge skipped: cannot read retained checkpoints", "err", err)
		return
	}
	stopped := e.stoppedPositions(live)
	for _, t := range targets {
		floor, ok := purgeFloor(t, live, stopped, retained)
		if !ok {
			continue
		}
		if t.history > 0 {
			seq, err := e.broker.SeqAtTime(ctx, t.jsStream, t.subject, time.Now().Add(-t.history))
			if err != nil {
				e.log.Warn("changelog purge skipped", "subject", t.subject, "err", err)
				continue
			}
			floor = min(floor, seq-1)
		}
		first, err := e.broker.FirstSeq(ctx, t.jsStream)
		if err != nil {
			e.log.Warn("changelog purge skipped", "subject", t.subject, "err", err)
			continue
		}
		if floor+1 <= first {
			continue
		}
		if err := e.broker.PurgeSubjectBelow(ctx, t.jsStream, t.subject, floor+1); err != nil {
			e.log.Warn("changelog purge failed", "subject", t.subject, "err", err)
			continue
		}
		e.log.Debug("purged changelog", "subject", t.subject, "jetstream", t.jsStream, "from", first, "below", floor+1)
	}
}

// purgeTargets lists the subjects that may be purged: tables' changelogs
// (unless a new view would still replay them), and subjects whose every SQL
// stream says retention = 'consumed', each only if its JetStream stream
// holds that subject alone.
func (e *Engine) purgeTargets(ctx context.Context) []purgeTarget {
	bySubject := map[string]*purgeTarget{}
	excluded := map[string]bool{}
	e.catMu.RLock()
	objs := make([]*catalog.Descriptor, 0, len(e.objs))
	for _, d := range e.objs {
		objs = append(objs, d)
	}
	e.catMu.RUnlock()
	for _, d := range objs {
		if d.Kind != catalog.KindTable && d.Kind != catalog.KindStream {
			continue
		}
		// A stream with an envelope is stored as a table, but its
		// subject is its producers': purged only as a stream's is.
		stream := d.Kind == catalog.KindStream || d.Envelope() != ""
		eligible := stream && d.Options[optRetention] == retentionConsumed
		if !stream {
			eligible = !e.newViewsReplayTable(d)
			if !eligible && !e.purge.toldKept.Swap(true) {
				e.log.Info(tablesKeptMessage)
			}
		}
		if !eligible {
			excluded[d.Subject] = true
			continue
		}
		t := bySubject[d.Subject]
		if t == nil {
			t = &purgeTarget{jsStream: d.JSStream, subject: d.Subject}
			bySubject[d.Subject] = t
		}
		if t.jsStream != d.JSStream {
			excluded[d.Subject] = true
		}
		t.objects = append(t.objects, d.Name)
		if h, ok := d.Options[optHistory]; ok {
			if w, err := parseHistory(h); err == nil {
				t.history = max(t.history, w)
			}
		}
	}
	// A subject pattern and a subject it matches (or two overlapping
	// patterns) share messages that each one's readers need: neither is
	// purged.
	for subject := range bySubject {
		for _, d := range objs {
			if (d.Kind == catalog.KindTable || d.Kind == catalog.KindStream) && d.Subject != subject && broker.SubjectsCollide(d.Subject, subject) {
				excluded[subject] = true
			}
		}
	}
	var out []purgeTarget
	for subject, t := range bySubject {
		if excluded[subject] {
			continue
		}
		subjects, err := e.broker.StreamSubjects(ctx, t.jsStream)
		if err != nil || len(subjects) != 1 || subjects[0] != subject {
			continue
		}
		out = append(out, *t)
	}
	return out
}

// storedPosition is a source position of a view or table pipeline that
// is not running, read from the store.
type storedPosition struct {
	stream string // SQL name of the source
	seq    uint64
}

// stoppedPositions returns the stored source positions of every view and
// table whose pipeline is not running (it failed, or has not started):
// it restarts from them.
func (e *Engine) stoppedPositions(live []exec.ViewPosition) []storedPosition {
	running := map[uint32]bool{}
	for _, p := range live {
		running[p.ViewID] = true
	}
	var out []storedPosition
	for _, kind := range []catalog.ObjectKind{catalog.KindView, catalog.KindTable} {
		for _, d := range e.objects(kind) {
			if running[d.ID] {
				continue
			}
			streams := []string{d.Name}
			if kind == catalog.KindView {
				root, err := e.viewPlan(d)
				if err == nil {
					streams, err = e.sourceStreams(d, root)
				}
				if err != nil {
					// Unknown sources: keep everything anything might read.
					out = append(out, storedPosition{stream: "", seq: 0})
					continue
				}
			}
			for i, name := range streams {
				pos, err := e.store.Position(d.ID, uint16(i))
				if err != nil {
					out = append(out, storedPosition{stream: "", seq: 0})
					continue
				}
				out = append(out, storedPosition{stream: name, seq: pos.Seq})
			}
		}
	}
	return out
}

// purgeFloor returns the highest sequence of t's subject that nothing
// listed still needs (everything above it is kept), and false when
// nothing reads the subject yet or something's needs are unknown.
func purgeFloor(t purgeTarget, live []exec.ViewPosition, stopped []storedPosition, retained []checkpoint.Position) (uint64, bool) {
	floor, found := uint64(0), false
	note := func(seq uint64) {
		if !found || seq < floor {
			floor = seq
		}
		found = true
	}
	for _, p := range live {
		if p.Subject == t.subject {
			note(p.Seq)
		}
	}
	for _, p := range stopped {
		if p.stream == "" || slices.Contains(t.objects, p.stream) {
			note(p.seq)
		}
	}
	for _, p := range retained {
		if p.Subject == t.subject || p.Subject == "" && slices.Contains(t.objects, p.Stream) {
			note(p.Seq)
		}
	}
	return floor, found
}
