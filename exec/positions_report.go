package exec

// Positions returns every running view's source positions as of the newest
// committed epoch (what lag and freshness are measured from). Unlike
// AtEpochBoundary it does not hold commits back.
func (rt *Runtime) Positions() []ViewPosition {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.positionsLocked()
}

// positionsLocked lists each pipeline's committed source positions; rt.mu
// is held, so no epoch commits meanwhile.
func (rt *Runtime) positionsLocked() []ViewPosition {
	var out []ViewPosition
	for _, p := range rt.pipelines {
		p.mu.Lock()
		for i, s := range p.sources {
			var seq uint64
			if i < len(p.committed) {
				seq = p.committed[i].Seq
			}
			out = append(out, ViewPosition{ViewID: p.id, View: p.name, Source: i, Stream: s.name, Subject: s.subject, Seq: seq})
		}
		p.mu.Unlock()
	}
	return out
}
