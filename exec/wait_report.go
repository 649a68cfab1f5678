package exec

import (
	"fmt"
	"sort"
	"strings"
)

// WaitReport says why a wait for targets (FLUSH, a backfill) has not
// ended: the oldest epoch in flight and the views it still waits for, and
// each source of a waited-for view whose committed position is short of
// its target, and of a view the oldest epoch waits for, with where its
// reader is.
type WaitReport struct {
	Committed, Injected uint64
	// Oldest is the oldest epoch in flight (0: none); WaitingFor are the
	// views that have not handed it in.
	Oldest     uint64
	WaitingFor []string
	Behind     []SourceLag
}

// SourceLag is one source of a view short of its target.
type SourceLag struct {
	View, Subject     string
	Committed, Target uint64
	// Read is the sequence of the last message its reader took; Reader
	// says which reader that is and its merge state.
	Read   uint64
	Reader string
	// Asked is the newest barrier the runtime asked of the source and
	// Delivered the newest its reader sent it; Pending are the requests
	// the reader has and has not sent.
	Asked, Delivered uint64
	Pending          []uint64
}

func (l SourceLag) String() string {
	s := fmt.Sprintf("view %s reads %s: committed %d of %d, %s at %d, barrier %d asked, %d delivered",
		l.View, l.Subject, l.Committed, l.Target, l.Reader, l.Read, l.Asked, l.Delivered)
	if len(l.Pending) > 0 {
		s += fmt.Sprintf(", %d requests pending at the reader (%d..%d)", len(l.Pending), l.Pending[0], l.Pending[len(l.Pending)-1])
	}
	return s
}

// String is the report in one line.
func (w WaitReport) String() string {
	var parts []string
	if w.Oldest != 0 {
		parts = append(parts, fmt.Sprintf("epoch %d (committed %d, injected %d) waits for %s",
			w.Oldest, w.Committed, w.Injected, strings.Join(w.WaitingFor, ", ")))
	} else {
		parts = append(parts, fmt.Sprintf("no epoch in flight (committed %d)", w.Committed))
	}
	for _, l := range w.Behind {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, "; ")
}

// WaitReport reports on the listed views (all when ids is nil) waiting to
// reach targets (subject -> sequence), as WaitFor waits.
func (rt *Runtime) WaitReport(ids []uint32, targets map[string]uint64) WaitReport {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	w := WaitReport{Committed: rt.committed.Load(), Injected: rt.injected}
	for e := range rt.pending {
		if w.Oldest == 0 || e < w.Oldest {
			w.Oldest = e
		}
	}
	if es := rt.pending[w.Oldest]; es != nil {
		for id := range es.waiting {
			name := fmt.Sprint(id)
			if p := rt.pipelines[id]; p != nil {
				name = p.name
			}
			w.WaitingFor = append(w.WaitingFor, name)
		}
		sort.Strings(w.WaitingFor)
	}
	want := rt.withUpstreamsLocked(ids)
	stuck := rt.pending[w.Oldest]
	for id, p := range rt.pipelines {
		// The sources of the views the oldest epoch waits for say why it
		// waits, even when the wait is for other views.
		holding := stuck != nil && stuck.waiting[id]
		if want != nil && !contains(want, id) && !holding {
			continue
		}
		p.mu.Lock()
		committed := make([]uint64, len(p.sources))
		for i := range p.sources {
			if i < len(p.committed) {
				committed[i] = p.committed[i].Seq
			}
		}
		p.mu.Unlock()
		for i, s := range p.sources {
			target := SubjectTarget(targets, s.subject)
			if (target == 0 || committed[i] >= target) && !holding {
				continue
			}
			w.Behind = append(w.Behind, s.lag(p.name, committed[i], target))
		}
	}
	sort.Slice(w.Behind, func(i, j int) bool {
		if w.Behind[i].View != w.Behind[j].View {
			return w.Behind[i].View < w.Behind[j].View
		}
		return w.Behind[i].Subject < w.Behind[j].Subject
	})
	return w
}

// lag describes input s of view, at committed of target.
func (s *sourceReader) lag(view string, committed, target uint64) SourceLag {
	l := SourceLag{View: view, Subject: s.subject, Committed: committed, Target: target,
		Asked: s.asked.Load(), Delivered: s.delivered.Load(), Reader: "no reader"}
	s.smu.Lock()
	r := s.reader
	for _, q := range s.reqs {
		l.Pending = append(l.Pending, q.epoch)
	}
	s.smu.Unlock()
	sort.Slice(l.Pending, func(i, j int) bool { return l.Pending[i] < l.Pending[j] })
	if r == nil {
		return l
	}
	l.Reader = r.describe()
	r.cmu.Lock()
	l.Read = r.pos
	r.cmu.Unlock()
	return l
}

// describe names r's role in its group and its merge state.
func (r *subjectReader) describe() string {
	g := r.grp
	g.mu.Lock()
	role := "private reader"
	if g.shared == r {
		role = "shared reader"
	}
	g.mu.Unlock()
	r.cmu.Lock()
	defer r.cmu.Unlock()
	role += fmt.Sprintf(" (barrier %d sent", r.emitted)
	if r.limited {
		role += fmt.Sprintf(", merge limit %d", r.limit)
		if r.held {
			role += " holding the next message"
		}
	}
	if p := r.plan; p != nil {
		role += fmt.Sprintf(", merge at epoch %d", p.epoch)
		if p.into != r {
			role += fmt.Sprintf(" (shared reader done: %t)", p.intoDone.Load())
		}
	}
	if need := r.reaching.Load(); need != 0 {
		role += fmt.Sprintf(", a barrier waits for message %d (a commit's fence)", need)
	}
	if at := r.heldAt.Load(); at != 0 {
		role += fmt.Sprintf(", message %d held at a commit's ceiling", at)
	}
	return role + ")"
}
