package meta

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/exec"
	"streamdb/storage"
)

// After each checkpoint the Purger purges, from each table's changelog
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
// while no checkpoint is being taken and under the catalog lock (no view
// is being created, moved or rolled back), and every position read later
// only grows, so a checkpoint begun after the purge never needs what it
// removed. A subject is purged only when its JetStream stream holds it
// alone: readers detect lost input by the stream's first sequence, which
// a purge of one subject among several would not move.

// PurgeHost is what a purge needs from the owner of the live catalog,
// which binds views.
type PurgeHost interface {
	// Objects returns every object of the live catalog.
	Objects() []*catalog.Descriptor
	// NewViewsReplayTable reports whether a view created now over table
	// d would read d's changelog from its first message: then it is not
	// purged.
	NewViewsReplayTable(d *catalog.Descriptor) bool
	// ViewSources lists the streams view d's dataflow reads, in the
	// order of its source indexes.
	ViewSources(d *catalog.Descriptor) ([]string, error)
	// AfterPurge runs after each purge, still under the catalog lock
	// (transactions whose references the purge removed go with them).
	AfterPurge(ctx context.Context)
}

// PurgeCoordinator is the checkpoint coordinator as a purge uses it
// (*checkpoint.Coordinator).
type PurgeCoordinator interface {
	// SetAfterCheckpoint has fn run after every completed checkpoint.
	SetAfterCheckpoint(fn func(*checkpoint.Meta))
	// Exclusive runs fn while no checkpoint is being taken.
	Exclusive(fn func() error) error
	// RetainedPositions lists the source positions of every retained
	// checkpoint and savepoint.
	RetainedPositions() ([]checkpoint.Position, error)
}

// PurgerConfig is what a Purger works on: one node's components.
type PurgerConfig struct {
	Host PurgeHost
	// Catalog is the lock the host holds while it changes the catalog;
	// a purge holds it throughout.
	Catalog sync.Locker
	Broker  *broker.Broker
	Coord   PurgeCoordinator
	// Positions lists the committed source positions of the running
	// view and table pipelines (exec.Runtime.Positions).
	Positions func() []exec.ViewPosition
	// Stored reads the stored source position of a pipeline
	// (storage.Store.Position).
	Stored func(obj uint32, source uint16) (storage.SourcePosition, error)
	Log    *slog.Logger
}

// Purger runs purges one at a time, off the checkpoint's goroutine.
type Purger struct {
	cfg PurgerConfig

	mu      sync.Mutex
	running bool
	pending bool
	closed  bool
	done    chan struct{} // closed when the running purge loop ends

	// toldKept is set once the log has said that tables' changelogs are
	// kept whole (NewViewsReplayTable).
	toldKept atomic.Bool
}

// NewPurger returns a purger over cfg; Start starts it.
func NewPurger(cfg PurgerConfig) *Purger { return &Purger{cfg: cfg} }

// TablesKeptMessage is logged once when new views over tables would
// replay their changelogs, so that none is purged.
const TablesKeptMessage = "tables' changelogs are kept whole: a new view over a table replays its changelog from the start"

// Start has a purge follow every completed checkpoint.
func (p *Purger) Start() {
	p.cfg.Coord.SetAfterCheckpoint(func(*checkpoint.Meta) { p.Schedule() })
}

// Schedule asks for a purge; one runs soon unless the purger is stopped
// (requests made while one runs are merged into one more).
func (p *Purger) Schedule() {
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
			p.purgeOnce()
		}
	}()
}

// Stop waits for a running purge and refuses new ones.
func (p *Purger) Stop() {
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
func (p *Purger) purgeOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.cfg.Catalog.Lock()
	defer p.cfg.Catalog.Unlock()
	defer p.cfg.Host.AfterPurge(ctx)
	objs := p.cfg.Host.Objects()
	targets := p.purgeTargets(ctx, objs)
	if len(targets) == 0 {
		return
	}
	var live []exec.ViewPosition
	var retained []checkpoint.Position
	err := p.cfg.Coord.Exclusive(func() error {
		var err error
		live = p.cfg.Positions()
		retained, err = p.cfg.Coord.RetainedPositions()
		return err
	})
	if err != nil {
		p.cfg.Log.Warn("changelog purge skipped: cannot read retained checkpoints", "err", err)
		return
	}
	stopped := p.stoppedPositions(objs, live)
	for _, t := range targets {
		floor, ok := purgeFloor(t, live, stopped, retained)
		if !ok {
			continue
		}
		if t.history > 0 {
			seq, err := p.cfg.Broker.SeqAtTime(ctx, t.jsStream, t.subject, time.Now().Add(-t.history))
			if err != nil {
				p.cfg.Log.Warn("changelog purge skipped", "subject", t.subject, "err", err)
				continue
			}
			floor = min(floor, seq-1)
		}
		first, err := p.cfg.Broker.FirstSeq(ctx, t.jsStream)
		if err != nil {
			p.cfg.Log.Warn("changelog purge skipped", "subject", t.subject, "err", err)
			continue
		}
		if floor+1 <= first {
			continue
		}
		if err := p.cfg.Broker.PurgeSubjectBelow(ctx, t.jsStream, t.subject, floor+1); err != nil {
			p.cfg.Log.Warn("changelog purge failed", "subject", t.subject, "err", err)
			continue
		}
		p.cfg.Log.Debug("purged changelog", "subject", t.subject, "jetstream", t.jsStream, "from", first, "below", floor+1)
	}
}

// purgeCandidates lists, of the catalog objs, the subjects that may be
// purged as far as the catalog tells: tables' changelogs (unless a new
// view would still replay them, as replays says), and subjects whose
// every SQL stream says retention = 'consumed'. A subject that two
// objects on different JetStream streams share, or that overlaps
// another object's subject pattern, is left out.
func purgeCandidates(objs []*catalog.Descriptor, replays func(*catalog.Descriptor) bool) map[string]*purgeTarget {
	bySubject := map[string]*purgeTarget{}
	excluded := map[string]bool{}
	for _, d := range objs {
		if d.Kind != catalog.KindTable && d.Kind != catalog.KindStream {
			continue
		}
		// A stream with an envelope is stored as a table, but its
		// subject is its producers': purged only as a stream's is.
		stream := d.Kind == catalog.KindStream || d.Envelope() != ""
		eligible := stream && d.Options[OptRetention] == RetentionConsumed
		if !stream {
			eligible = !replays(d)
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
		if h, ok := d.Options[OptHistory]; ok {
			if w, err := ParseHistory(h); err == nil {
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
	for subject := range excluded {
		delete(bySubject, subject)
	}
	return bySubject
}

// purgeTargets lists the subjects of objs that may be purged: the
// candidates whose JetStream stream holds that subject alone.
func (p *Purger) purgeTargets(ctx context.Context, objs []*catalog.Descriptor) []purgeTarget {
	cands := purgeCandidates(objs, func(d *catalog.Descriptor) bool {
		if !p.cfg.Host.NewViewsReplayTable(d) {
			return false
		}
		if !p.toldKept.Swap(true) {
			p.cfg.Log.Info(TablesKeptMessage)
		}
		return true
	})
	var out []purgeTarget
	for subject, t := range cands {
		subjects, err := p.cfg.Broker.StreamSubjects(ctx, t.jsStream)
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
	stream string // SQL name of the source; "": unknown, keep everything
	seq    uint64
}

// stoppedPositions returns the stored source positions of every view and
// table of objs whose pipeline is not running (it failed, or has not
// started): it restarts from them.
func (p *Purger) stoppedPositions(objs []*catalog.Descriptor, live []exec.ViewPosition) []storedPosition {
	running := map[uint32]bool{}
	for _, l := range live {
		running[l.ViewID] = true
	}
	var out []storedPosition
	for _, d := range objs {
		if d.Kind != catalog.KindView && d.Kind != catalog.KindTable || running[d.ID] {
			continue
		}
		streams := []string{d.Name}
		if d.Kind == catalog.KindView {
			var err error
			if streams, err = p.cfg.Host.ViewSources(d); err != nil {
				// Unknown sources: keep everything anything might read.
				out = append(out, storedPosition{stream: "", seq: 0})
				continue
			}
		}
		for i, name := range streams {
			pos, err := p.cfg.Stored(d.ID, uint16(i))
			if err != nil {
				out = append(out, storedPosition{stream: "", seq: 0})
				continue
			}
			out = append(out, storedPosition{stream: name, seq: pos.Seq})
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
