package exec

import (
	"math/bits"
	"slices"
)

// Member statistics: which of a stream's columns the messages fill and
// which member keys no column matches. A producer that names a field
// "customerId" while the column is customer_id, or that adds a field the
// stream has no column for, otherwise goes unseen: the column reads NULL
// and the field is dropped.
//
// The decoder notes each member as it reads it, in two bitmasks of the
// object being decoded (one bit per column below 64, one per tracked key),
// and folds them into its totals only when the object decodes, so the
// figures count decoded messages, each once however often it repeats a
// member. Nothing is allocated per message: a key no column matches is
// copied once, when it is first seen, and at most maxTrackedKeys of them
// are named (later ones count together in OtherKeys).

// maxTrackedKeys bounds the unmatched member keys a decoder names. Bit 63
// of the object's key mask stands for any key past them.
const maxTrackedKeys = 32

const otherKeyBit = 63

// KeyCount is a member key no column matches and the number of decoded
// messages that had it.
type KeyCount struct {
	Key      string
	Messages uint64
}

// KeyStats are what a decoder saw of the members of the messages it
// decoded (whole messages, errors and a table's changelog aside).
type KeyStats struct {
	// Decoded counts the messages decoded as objects.
	Decoded uint64
	// Unmatched counts those with a member no column matches.
	Unmatched uint64
	// Columns are the member keys of the columns members fill (not
	// generated or INCLUDE columns); Seen[i] reports whether a decoded
	// message had Columns[i].
	Columns []string
	Seen    []bool
	// Keys are the member keys no column matches, in the order first seen
	// (at most maxTrackedKeys); OtherKeys counts the messages with a key
	// past those.
	Keys      []KeyCount
	OtherKeys uint64
}

// keyStats is the decoder's side of KeyStats.
type keyStats struct {
	decoded, unmatched, otherKeys uint64
	// seenLow has bit i for column i < 64 seen in a decoded object;
	// seenHigh[i-64] the others (set as read, errors or not).
	seenLow  uint64
	seenHigh []bool
	keys     []KeyCount
	// msgCols and msgKeys are the bits of the object being decoded:
	// columns below 64, and keys by their index in keys (otherKeyBit for
	// an untracked one).
	msgCols, msgKeys uint64
	// key is the index in keys of the member lookup last found to be no
	// column (-1: untracked).
	key int
}

// noteColumn records a member of column col in the object being decoded.
func (s *keyStats) noteColumn(col int) {
	if col < 64 {
		s.msgCols |= 1 << uint(col)
		return
	}
	if s.seenHigh == nil {
		s.seenHigh = make([]bool, col-63)
	}
	for len(s.seenHigh) <= col-64 {
		s.seenHigh = append(s.seenHigh, false)
	}
	s.seenHigh[col-64] = true
}

// noteKey records, in the object being decoded, the member lookup found
// to be no column (its index in keys is s.key).
func (s *keyStats) noteKey() {
	if s.key >= 0 {
		s.msgKeys |= 1 << uint(s.key)
	} else {
		s.msgKeys |= 1 << otherKeyBit
	}
}

// keyIndex returns the index of the unmatched key raw in keys, adding it
// if there is room; -1 if there is none.
func (s *keyStats) keyIndex(raw []byte) int {
	for i := range s.keys {
		if s.keys[i].Key == string(raw) {
			return i
		}
	}
	if len(s.keys) == maxTrackedKeys {
		return -1
	}
	s.keys = append(s.keys, KeyCount{Key: string(raw)})
	return len(s.keys) - 1
}

// begin starts an object.
func (s *keyStats) begin() { s.msgCols, s.msgKeys = 0, 0 }

// done folds the object just decoded into the totals.
func (s *keyStats) done() {
	s.decoded++
	s.seenLow |= s.msgCols
	if m := s.msgKeys; m != 0 {
		s.unmatched++
		if m&(1<<otherKeyBit) != 0 {
			s.otherKeys++
			m &^= 1 << otherKeyBit
		}
		for m != 0 {
			i := bits.TrailingZeros64(m)
			s.keys[i].Messages++
			m &= m - 1
		}
	}
}

// KeyStats returns the member statistics of the messages decoded so far.
func (d *RowDecoder) KeyStats() KeyStats {
	var out KeyStats
	d.copyKeyStats(&out)
	return out
}

// copyKeyStats writes KeyStats into out, reusing its slices.
func (d *RowDecoder) copyKeyStats(out *KeyStats) {
	s := &d.stats
	out.Decoded, out.Unmatched, out.OtherKeys = s.decoded, s.unmatched, s.otherKeys
	out.Columns, out.Seen = out.Columns[:0], out.Seen[:0]
	for i, c := range d.cols {
		if col, ok := d.index[c.Name]; !ok || col != i {
			continue // generated, INCLUDE, or a duplicate name
		}
		seen := false
		if i < 64 {
			seen = s.seenLow&(1<<uint(i)) != 0
		} else if i-64 < len(s.seenHigh) {
			seen = s.seenHigh[i-64]
		}
		out.Columns = append(out.Columns, c.Name)
		out.Seen = append(out.Seen, seen)
	}
	out.Keys = append(out.Keys[:0], s.keys...)
}

// cloneKeyStats returns a copy of s that shares no slice with it.
func cloneKeyStats(s KeyStats) KeyStats {
	s.Columns, s.Seen, s.Keys = slices.Clone(s.Columns), slices.Clone(s.Seen), slices.Clone(s.Keys)
	return s
}

// publishKeyStats copies the decoder's member statistics where
// StreamKeyStats reads them: the decoder itself is the consumer
// callback's alone. Caller holds mu.
func (r *subjectReader) publishKeyStats() {
	rows, ok := r.decoder.(*RowDecoder)
	if !ok || r.table {
		return
	}
	r.statsMu.Lock()
	rows.copyKeyStats(&r.keyStats)
	r.statsMu.Unlock()
}

// StreamKeyStats returns, per SQL stream name, the member statistics of
// each of its readers (the views reading it share readers) since the
// reader started; readers that decoded nothing yet are left out.
func (rt *Runtime) StreamKeyStats() map[string][]KeyStats {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := map[string][]KeyStats{}
	seen := map[*subjectReader]bool{}
	for _, p := range rt.pipelines {
		for _, s := range p.sources {
			s.smu.Lock()
			r := s.reader
			s.smu.Unlock()
			if r == nil || r.table || seen[r] {
				continue
			}
			seen[r] = true
			r.statsMu.Lock()
			st := cloneKeyStats(r.keyStats)
			r.statsMu.Unlock()
			if st.Decoded > 0 {
				out[s.name] = append(out[s.name], st)
			}
		}
	}
	return out
}
