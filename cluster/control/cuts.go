package control

// Cuts are keyed by source: the JetStream subject a reader reads (a
// stream's subject, a table's changelog), whose sequences are those of
// the JetStream stream holding it. A reader reads one subject, and one
// that has read all of a quiet subject stands at that subject's last
// message, not at its stream's last sequence: keyed by stream, a quiet
// subject would hold back the cut of every other subject in the stream.

// Report is one reader's position after epoch e-1: per source it reads,
// the last sequence it has taken. A reader that reads one source twice
// (a self-join) reports the lower position.
type Report map[string]uint64

// MinCuts computes the cuts of epoch e (the min-position rule): for each
// source, the lowest position any of its readers reported after epoch
// e-1, so that every reader already holds its whole epoch e and none
// waits for input. A cut never goes back: a reader behind the previous
// cut (one just restored or placed) reads up to that cut in epoch e, and
// a source no reader reported keeps its previous cut. prev is epoch e-1's
// cuts (nil for the first epoch); neither argument is changed.
func MinCuts(prev map[string]uint64, reports []Report) map[string]uint64 {
	low := map[string]uint64{}
	for _, r := range reports {
		for src, seq := range r {
			if cur, ok := low[src]; !ok || seq < cur {
				low[src] = seq
			}
		}
	}
	cuts := make(map[string]uint64, len(prev)+len(low))
	for src, seq := range prev {
		cuts[src] = seq
	}
	for src, seq := range low {
		cuts[src] = max(seq, prev[src])
	}
	return cuts
}
