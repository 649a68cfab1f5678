package exec

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"streamdb/types"
)

// Views that read one subject with the same decoder form a readerGroup:
// one shared reader, and private readers for inputs that started
// elsewhere (a new view backfilling from the stream's history, a view
// whose position was moved, views restarting at unequal positions). A
// private reader joins the shared one at a barrier where both have taken
// exactly the same messages:
//
//  1. when a private reader is within mergeWindow messages of the shared
//     one, the group sets a limit L = the larger position on both (and on
//     every other private reader that close): a reader takes messages up
//     to L and holds the next one (as pause does);
//  2. once the shared reader and some private ones are at L (pos = L, or
//     holding a message past it, which shows none lies between), the
//     group picks E, an epoch neither has sent: each sends its barriers up
//     to E at position L. The shared reader then attaches the moving
//     inputs and lifts its limit; after that, each private reader, once it
//     has sent its inputs every barrier they asked for up to E, hands them
//     over and stops (handOver). Barriers past E are the shared reader's
//     alone to send: a private reader that sent one would race the shared
//     reader for its inputs' requests and, losing them all, never hand
//     over. The pipeline takes the shared reader's messages only after the
//     private one's handoff (feedOrder), so nothing is lost or seen twice;
//  3. a merge that does not come together within mergeRounds barriers, or
//     that a fence past L would block (reach), is given up: limits are
//     lifted and it is tried again later. Only a plan the shared reader
//     has not carried out can be given up, so it goes first: having sent
//     every epoch up to E at L, it shows that no fence of those epochs
//     lies past L, and the private readers, which send only those, never
//     wait at their limit for a fence.
//
// Locks: a reader's mu, then its group's mu, then readers' cmu (the
// shared reader's first), then inputs' smu.

const (
	mergeWindow = 4 * chunkRows
	mergeRounds = 50
)

// SharedReaderMerging turns the merge of private readers into the shared
// one on. Off, every input after a group's first keeps its own JetStream
// reader: exact, without the sharing. A limit is marked by limited, never
// by a zero limit: readers restarted before any message (position 0) merge
// with limit 0, and a limit read as "none" there let each reader take a
// different number of messages before the handoff.
const SharedReaderMerging = true

// readerGroups holds the runtime's reader groups by key (readerKey).
type readerGroups struct {
	mu    sync.Mutex
	byKey map[string]*readerGroup
}

type readerGroup struct {
	all     *readerGroups
	key     string
	mu      sync.Mutex
	shared  *subjectReader
	private []*subjectReader
	try     *mergeTry
}

// mergeTry is step 1 under way: limit set on shared and ps.
type mergeTry struct {
	limit  uint64
	ps     []*subjectReader
	rounds int
}

// mergePlan is step 2: at barrier epoch, the readers in from hand moving
// over to into. carried counts the readers that carried it out (into
// first: intoDone).
type mergePlan struct {
	epoch    uint64
	into     *subjectReader
	from     []*subjectReader
	moving   []*sourceReader
	carried  int
	intoDone atomic.Bool
}

// readerKey tells which inputs may share a reader: the same subject read
// with the same decoder, so that every one sees the rows its plan expects.
func readerKey(s *sourceReader) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s\x00%s\x00", s.jsStream, s.subject)
	var d *RowDecoder
	switch dec := s.decoder.(type) {
	case *RowDecoder:
		d = dec
		sb.WriteString("row")
	case *ChangelogDecoder:
		d = dec.rows
		sb.WriteString("changelog")
	default:
		fmt.Fprintf(&sb, "%p", s) // unknown decoder: a reader of its own
		return sb.String()
	}
	fmt.Fprintf(&sb, ":%t", d.allowNUL)
	for i, c := range d.cols {
		fmt.Fprintf(&sb, "|%s:%s:%v", c.Name, c.Type, c.Mod)
		if i < len(d.missing) && d.missing[i] != nil {
			fmt.Fprintf(&sb, "=%q", types.FormatText(*d.missing[i], c.Type))
		}
	}
	for _, g := range d.gen {
		fmt.Fprintf(&sb, "|generated %d:%s", g.Col, g.Expr)
	}
	sb.WriteString(d.metaKey())
	return sb.String()
}

// widenDecoder makes dst decode every column src decodes (the union of
// the columns the inputs read). Inputs that leave do not narrow it again.
func widenDecoder(dst, src messageDecoder) {
	rowsOf := func(m messageDecoder) *RowDecoder {
		switch d := m.(type) {
		case *RowDecoder:
			return d
		case *ChangelogDecoder:
			return d.rows
		}
		return nil
	}
	d, s := rowsOf(dst), rowsOf(src)
	if d == nil || s == nil || d == s || d.skip == nil {
		return
	}
	d.widenDirect(s)
	if s.skip == nil {
		d.skip = nil
		return
	}
	for i := range d.skip {
		d.skip[i] = d.skip[i] && i < len(s.skip) && s.skip[i]
	}
}

// subjectReaders returns the runtime's reader groups.
func (rt *Runtime) subjectReaders() *readerGroups {
	rt.readersOnce.Do(func() { rt.readers = &readerGroups{byKey: map[string]*readerGroup{}} })
	return rt.readers
}

// join attaches input s to a new reader starting at its position: the
// group's shared reader if it has none, else a private one that merges
// later.
func (gs *readerGroups) join(s *sourceReader) {
	key := readerKey(s)
	gs.mu.Lock()
	g := gs.byKey[key]
	if g == nil {
		g = &readerGroup{all: gs, key: key}
		gs.byKey[key] = g
	}
	g.mu.Lock()
	gs.mu.Unlock()
	r := newSubjectReader(g, s)
	s.smu.Lock()
	s.reader, s.first = r, r
	s.smu.Unlock()
	if g.shared == nil {
		g.shared = r
	} else {
		g.private = append(g.private, r)
	}
	g.mu.Unlock()
	go r.run()
}

// finish takes a stopped reader out of its group; a private reader
// becomes the shared one if the shared one stopped. A reader that failed
// fails every input it fed or was about to.
func (g *readerGroup) finish(r *subjectReader, err error) {
	g.gs().mu.Lock()
	g.mu.Lock()
	g.dropTryLocked()
	r.cmu.Lock()
	if p := r.plan; p != nil && p.carried == 0 {
		g.cancelPlanLocked(p, r)
	}
	subs := append([]*sourceReader(nil), r.subs...)
	if p := r.plan; p != nil && p.into == r {
		subs = append(subs, p.moving...)
	}
	r.cmu.Unlock()
	if g.shared == r {
		g.shared = nil
		if len(g.private) > 0 {
			g.shared, g.private = g.private[0], g.private[1:]
		}
	} else {
		for i, p := range g.private {
			if p == r {
				g.private = append(g.private[:i], g.private[i+1:]...)
				break
			}
		}
	}
	if g.shared == nil && g.all.byKey[g.key] == g {
		delete(g.all.byKey, g.key)
	}
	g.mu.Unlock()
	g.gs().mu.Unlock()
	if err == nil {
		return
	}
	for _, s := range subs {
		select {
		case s.failed <- err:
		default:
		}
	}
}

func (g *readerGroup) gs() *readerGroups { return g.all }

// retire reports whether r may stop: it feeds no running pipeline and is
// to feed none. The group then no longer hands it anything.
func (g *readerGroup) retire(r *subjectReader) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	r.cmu.Lock()
	defer r.cmu.Unlock()
	for _, s := range r.subs {
		if !s.isGone() {
			return false
		}
	}
	if p := r.plan; p != nil && p.into == r {
		for _, s := range p.moving {
			if !s.isGone() {
				return false
			}
		}
	}
	return true
}

// coordinate runs the merge steps for the group of r, if r is its shared
// reader; the shared reader calls it after each barrier it sends.
func (g *readerGroup) coordinate(r *subjectReader) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shared != r || len(g.private) == 0 {
		return
	}
	r.cmu.Lock()
	defer r.cmu.Unlock()
	if r.plan != nil {
		return
	}
	if g.try == nil && SharedReaderMerging {
		g.startTryLocked(r)
	}
	if g.try == nil {
		return
	}
	t := g.try
	var ready, late []*subjectReader
	for _, p := range t.ps {
		p.cmu.Lock()
		if p.pos == t.limit || p.held {
			ready = append(ready, p)
		} else {
			late = append(late, p)
		}
	}
	defer func() {
		for _, p := range t.ps {
			p.cmu.Unlock()
		}
	}()
	if (r.pos != t.limit && !r.held) || len(ready) == 0 {
		if t.rounds++; t.rounds > mergeRounds {
			r.liftLimitLocked()
			for _, p := range t.ps {
				p.liftLimitLocked()
			}
			g.try = nil
		}
		return
	}
	plan := &mergePlan{epoch: r.emitted, into: r, from: ready}
	for _, p := range ready {
		plan.epoch = max(plan.epoch, p.emitted)
		p.plan = plan
		for _, s := range p.subs {
			if !s.isGone() {
				plan.moving = append(plan.moving, s)
			}
		}
	}
	plan.epoch++
	r.plan = plan
	r.incoming += len(plan.moving)
	for _, p := range late {
		p.liftLimitLocked()
	}
	g.try = nil
	// A shared reader that feeds no pipeline carries the plan out in its
	// next round (settle); nothing else may wake it, since the private
	// readers hand over only after it.
	r.wake()
}

// startTryLocked sets a limit on the shared reader r and the private
// readers close to it. Caller holds g.mu and r.cmu.
func (g *readerGroup) startTryLocked(r *subjectReader) {
	var ps []*subjectReader
	limit := r.pos
	for _, p := range g.private {
		p.cmu.Lock()
		if p.plan == nil && max(p.pos, r.pos)-min(p.pos, r.pos) <= mergeWindow {
			ps = append(ps, p)
			limit = max(limit, p.pos)
			continue // stays locked until the limit is set
		}
		p.cmu.Unlock()
	}
	if len(ps) == 0 {
		return
	}
	r.setLimitLocked(limit)
	for _, p := range ps {
		p.setLimitLocked(limit)
		p.cmu.Unlock()
	}
	g.try = &mergeTry{limit: limit, ps: ps}
}

// abandon gives up the merge r takes part in if nobody carried it out
// yet: a fence past the limit would otherwise hold r forever.
func (g *readerGroup) abandon(r *subjectReader) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropTryLocked()
	r.cmu.Lock()
	p := r.plan
	r.cmu.Unlock()
	if p != nil && p.carried == 0 {
		g.cancelPlanLocked(p, nil)
	}
}

// dropTryLocked lifts the limits of a merge try. Caller holds g.mu.
func (g *readerGroup) dropTryLocked() {
	t := g.try
	if t == nil {
		return
	}
	g.try = nil
	for _, x := range append([]*subjectReader{g.shared}, t.ps...) {
		if x == nil {
			continue
		}
		x.cmu.Lock()
		x.liftLimitLocked()
		x.cmu.Unlock()
	}
}

// cancelPlanLocked undoes plan p before anyone carried it out. locked, if
// set, is a reader whose cmu the caller holds. Caller holds g.mu.
func (g *readerGroup) cancelPlanLocked(p *mergePlan, locked *subjectReader) {
	for _, x := range append([]*subjectReader{p.into}, p.from...) {
		if x != locked {
			x.cmu.Lock()
		}
		if x.plan == p {
			x.plan = nil
			x.liftLimitLocked()
		}
		if x == p.into {
			x.incoming -= len(p.moving)
		}
		if x != locked {
			x.cmu.Unlock()
		}
		x.wake() // a private reader held back barriers past the plan's epoch
	}
}

// handOver carries out the plan of private reader r once the shared
// reader has carried it out and r has sent every barrier its inputs asked
// for up to the plan's epoch (with none still to be forwarded). It reports
// false if ctx ended.
func (r *subjectReader) handOver() bool {
	r.cmu.Lock()
	p := r.plan
	ready := p != nil && p.into != r && p.intoDone.Load()
	for _, s := range r.subs {
		if !ready {
			break
		}
		s.smu.Lock()
		if !s.gone {
			ready = s.high >= p.epoch
			for _, q := range s.reqs {
				if q.epoch > r.emitted && q.epoch <= p.epoch {
					ready = false
				}
			}
		}
		s.smu.Unlock()
	}
	r.cmu.Unlock()
	if !ready {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.carryOut(p)
}

// carryOut does r's part of plan p: the shared reader attaches the moving
// inputs after the rows it took so far and lifts its limit; a private one
// (afterwards, see handOver) sends them the rows it took and then hands
// them over. Caller holds mu. It reports false if ctx ended.
func (r *subjectReader) carryOut(p *mergePlan) bool {
	if !r.flushLocked() {
		return false
	}
	g := r.grp
	g.mu.Lock()
	r.cmu.Lock()
	if r.plan != p {
		r.cmu.Unlock()
		g.mu.Unlock()
		return true // given up meanwhile
	}
	p.carried++
	r.plan = nil
	if p.into == r {
		for _, s := range p.moving {
			if !s.isGone() {
				r.subs = append(r.subs, s)
				widenDecoder(r.decoder, s.decoder)
			}
		}
		r.incoming -= len(p.moving)
		r.emitted = max(r.emitted, p.epoch)
		r.liftLimitLocked()
		p.intoDone.Store(true)
		r.cmu.Unlock()
		g.mu.Unlock()
		r.wake()
		for _, x := range p.from {
			x.wake() // its handOver
		}
		return true
	}
	moving := r.subs
	r.subs = nil
	r.cmu.Unlock()
	g.mu.Unlock()
	for _, s := range moving {
		s.smu.Lock()
		s.reader = p.into
		s.smu.Unlock()
		if !s.send(r.ctx, pipelineMsg{src: s.idx, from: r, handoff: p.into}) {
			return false
		}
	}
	p.into.wake()
	return true
}

// setLimitLocked makes r take no message past limit. Caller holds cmu.
func (r *subjectReader) setLimitLocked(limit uint64) {
	r.limit, r.limited = limit, true
	r.setHeld(false)
}

// liftLimitLocked lets r take messages again. Caller holds cmu.
func (r *subjectReader) liftLimitLocked() {
	if !r.limited {
		return
	}
	r.limit, r.limited = 0, false
	r.setHeld(false)
	close(r.limitCh)
	r.limitCh = make(chan struct{})
}
