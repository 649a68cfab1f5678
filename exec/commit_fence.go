package exec

import "streamdb/broker"

// A commit that writes several tables publishes one message to each
// table's subject, and every view must see all of them in one epoch or
// none. Readers of different subjects place a barrier independently, so
// two bounds keep a commit's messages between the same two barriers on
// every subject:
//
//   - a fence bounds barriers injected after the commit from below: such a
//     barrier waits at each reader of a subject until the reader has taken
//     the commit's message there (reach);
//   - a ceiling bounds barriers injected before the commit from above: an
//     input asked for a barrier it has not received yet may not receive
//     the commit's message before it (take waits, belowCeilings).
//
// No barrier is injected while a commit publishes (fenceGate), so every
// barrier is one or the other.

// fence is the end of a multi-subject commit on one subject: a barrier
// injected after the commit may pass a reader of the subject only once the
// reader has taken seq. epoch is the first barrier that carried it (0 until
// one has); once that epoch commits, every reader has passed the fence.
type fence struct {
	seq   uint64
	epoch uint64
}

// barrierRequest asks a source reader for barrier epoch once it has taken
// every message up to need (see fence).
type barrierRequest struct {
	epoch uint64
	need  uint64
	// cut: the barrier follows every message up to cut and precedes
	// every later one (envelope_txn.go; 0: no cut).
	cut uint64
}

// ceiling holds an input's messages after sequence floor until the input
// has received barrier epoch. floor is the subject's newest fence when the
// ceiling was set (0 if none), or the highest need of a barrier asked of
// the input if that is higher: both are messages published before the
// commit, so below its messages. Every message a pending barrier must
// follow (its need) is at or below floor, so holding the messages above it
// never stops that barrier. (A fence is forgotten once its epoch commits,
// but a view that started after that epoch may have been asked for
// barriers behind it and still read below it, backfilling.)
type ceiling struct {
	floor uint64
	epoch uint64
}

// PublishFenced runs publish, which publishes one commit's messages to
// subjects and returns the sequence of the newest on each, so that every
// view sees the whole commit in one epoch: no barrier is injected while it
// runs; each barrier injected before it reaches every input of those
// subjects before the commit's messages (a ceiling); each injected after
// it waits at every reader of those subjects until the reader has taken
// the commit's messages (a fence). Messages of one subject are atomic on
// their own and need neither.
func (rt *Runtime) PublishFenced(subjects []string, publish func() (map[string]uint64, error)) error {
	rt.fenceGate.RLock()
	defer rt.fenceGate.RUnlock()
	rt.mu.Lock()
	rt.setCeilingsLocked(subjects)
	rt.mu.Unlock()
	seqs, err := publish()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	// Record what was published even on error: part of a commit may be
	// in JetStream.
	for subj, seq := range seqs {
		if f := rt.fences[subj]; f == nil || f.seq < seq {
			rt.fences[subj] = &fence{seq: seq}
		}
	}
	return err
}

// setCeilingsLocked sets a ceiling on every input of subjects that has
// been asked for a barrier it has not received. It runs before the
// commit publishes: a reader may take a message before its publisher
// hears that JetStream stored it. Caller holds fenceGate (shared) and mu.
func (rt *Runtime) setCeilingsLocked(subjects []string) {
	for _, p := range rt.pipelines {
		for _, s := range p.sources {
			for _, subj := range subjects {
				if s.subject != subj && !broker.SubjectCovers(s.subject, subj) {
					continue
				}
				s.addCeiling(ceiling{floor: max(rt.fenceLocked(s.subject), s.askedNeed), epoch: s.asked.Load()})
				break
			}
		}
	}
}

// addCeiling sets c unless the input has received barrier c.epoch.
func (s *sourceReader) addCeiling(c ceiling) {
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.gone || s.delivered.Load() >= c.epoch {
		return
	}
	s.ceilings = append(s.ceilings, c)
	s.rt.ceilings.Add(1)
}

// mayTake reports whether the message at seq may reach the input now,
// and drops the ceilings it has passed.
func (s *sourceReader) mayTake(seq uint64) bool {
	s.smu.Lock()
	defer s.smu.Unlock()
	delivered := s.delivered.Load()
	ok := true
	kept := s.ceilings[:0]
	for _, c := range s.ceilings {
		if s.gone || delivered >= c.epoch {
			s.rt.ceilings.Add(-1)
			continue
		}
		kept = append(kept, c)
		ok = ok && seq <= c.floor
	}
	s.ceilings = kept
	return ok
}

// dropCeilings drops the input's ceilings (it left). Caller holds smu.
func (s *sourceReader) dropCeilings() {
	if len(s.ceilings) > 0 {
		s.rt.ceilings.Add(-int64(len(s.ceilings)))
		s.ceilings = nil
		s.rt.ceilingPassed.notify()
	}
}

// barrierDelivered records that barrier e reached the input, waking readers
// that wait for it at a ceiling. Barriers reach an input in order but for
// a merge (shared_source_merge.go): the shared reader may send the moving
// input barriers past the plan's epoch before the private reader sends
// the last ones up to it; the pipeline takes those first (feedOrder), and
// delivered stays the newest, so that a ceiling on the input lifted by the
// shared reader's barrier does not come back and hold that reader.
func (s *sourceReader) barrierDelivered(e uint64) {
	for {
		d := s.delivered.Load()
		if e <= d || s.delivered.CompareAndSwap(d, e) {
			break
		}
	}
	if s.rt.ceilings.Load() > 0 {
		s.rt.ceilingPassed.notify()
	}
}

// belowCeilings waits until every input of r may receive the message at
// seq (mayTake). Readers' run goroutines send the barriers that lift the
// ceilings without waiting for take. It reports false if ctx ended.
func (r *subjectReader) belowCeilings(seq uint64) bool {
	for r.rt.ceilings.Load() > 0 {
		sent := r.rt.ceilingPassed.wait()
		r.cmu.Lock()
		ok := true
		for _, s := range r.subs {
			ok = s.mayTake(seq) && ok
		}
		r.cmu.Unlock()
		if ok {
			r.heldAt.Store(0)
			return true
		}
		r.heldAt.Store(seq)
		select {
		case <-sent:
		case <-r.ctx.Done():
			return false
		}
	}
	return true
}

// fenceLocked returns the newest fence a reader of subject must pass (0:
// none); a subject pattern's is the newest on the subjects it matches, all
// in its JetStream stream. Caller holds mu.
func (rt *Runtime) fenceLocked(subject string) uint64 {
	if f := rt.fences[subject]; f != nil || !broker.IsPattern(subject) {
		if f == nil {
			return 0
		}
		return f.seq
	}
	var seq uint64
	for subj, f := range rt.fences {
		if f.seq > seq && broker.SubjectCovers(subject, subj) {
			seq = f.seq
		}
	}
	return seq
}
