package admin

import (
	"sync"
	"time"
)

// The console keeps a short history of each view's figures, sampled from
// the metrics registry on a fixed period whether or not a page is open,
// so a page shows rates (changes between samples) and charts over the
// last minutes as soon as it opens. Nothing of it is durable: a restart
// starts a new history.

const (
	historyPeriod  = 5 * time.Second
	historySamples = 120 // ten minutes at historyPeriod
)

// viewSample is one view's figures at one moment.
type viewSample struct {
	freshness, lag, rowsIn, rowsOut float64
	hasFreshness                    bool
}

type sample struct {
	at    time.Time
	views map[string]viewSample
	sinks map[string]float64 // pending epochs by sink
	// positions are what each view has read of each input, by {input,
	// view}.
	positions map[[2]string]float64
}

// history is a ring of the newest samples, oldest first.
type history struct {
	mu      sync.Mutex
	samples []sample
}

func (h *history) record(at time.Time, m viewMetrics) {
	s := sample{at: at, views: map[string]viewSample{}, sinks: m.sinkPending, positions: m.positions}
	names := map[string]bool{}
	for _, set := range []map[string]float64{m.rowsIn, m.rowsOut, m.freshness, m.lag} {
		for name := range set {
			names[name] = true
		}
	}
	for name := range names {
		f, ok := m.freshness[name]
		s.views[name] = viewSample{freshness: f, hasFreshness: ok, lag: m.lag[name], rowsIn: m.rowsIn[name], rowsOut: m.rowsOut[name]}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
	if n := len(h.samples); n > historySamples {
		h.samples = append(h.samples[:0:0], h.samples[n-historySamples:]...)
	}
}

// viewPoint is one moment of a view's chart: rates are per second over
// the period that ends at the moment.
type viewPoint struct {
	at                    time.Time
	inRate, outRate       float64
	freshness, lag        float64
	hasFreshness, hasRate bool
}

// series returns view's points, oldest first.
func (h *history) series(view string) []viewPoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []viewPoint
	var prev *sample
	for i := range h.samples {
		s := &h.samples[i]
		v, ok := s.views[view]
		if !ok {
			prev = nil
			continue
		}
		p := viewPoint{at: s.at, freshness: v.freshness, hasFreshness: v.hasFreshness, lag: v.lag}
		if prev != nil {
			if pv, ok := prev.views[view]; ok {
				if dt := s.at.Sub(prev.at).Seconds(); dt > 0 {
					// A counter that went down was reset (the view was
					// replaced): no rate for that period.
					if v.rowsIn >= pv.rowsIn && v.rowsOut >= pv.rowsOut {
						p.inRate, p.outRate, p.hasRate = (v.rowsIn-pv.rowsIn)/dt, (v.rowsOut-pv.rowsOut)/dt, true
					}
				}
			}
		}
		out = append(out, p)
		prev = s
	}
	return out
}

// latestRate returns view's newest rates of rows in and out per second,
// and false before two samples exist.
func (h *history) latestRate(view string) (in, out float64, ok bool) {
	pts := h.series(view)
	for i := len(pts) - 1; i >= 0; i-- {
		if pts[i].hasRate {
			return pts[i].inRate, pts[i].outRate, true
		}
	}
	return 0, 0, false
}

// edgeRate returns the messages per second view read of input between
// the two newest samples that have its position, and false before there
// are two, or when the position went back (a rollback to a savepoint).
func (h *history) edgeRate(input, view string) (float64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := [2]string{input, view}
	var newer *sample
	for i := len(h.samples) - 1; i >= 0; i-- {
		s := &h.samples[i]
		if _, ok := s.positions[key]; !ok {
			continue
		}
		if newer == nil {
			newer = s
			continue
		}
		dt := newer.at.Sub(s.at).Seconds()
		d := newer.positions[key] - s.positions[key]
		if dt <= 0 || d < 0 {
			return 0, false
		}
		return d / dt, true
	}
	return 0, false
}

// run samples the registry every historyPeriod until stop is closed.
func (h *history) run(stop <-chan struct{}) {
	t := time.NewTicker(historyPeriod)
	defer t.Stop()
	h.record(time.Now(), gatherViewMetrics())
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			h.record(now, gatherViewMetrics())
		}
	}
}
