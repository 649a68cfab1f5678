package meta

import (
	"slices"

	"streamdb/exec"
	"streamdb/types"
)

// valueIndex finds the changes among a table log's entries whose row
// holds given values in the columns of a unique index, without going
// over the entries: every check of a UNIQUE value looks for the commits
// the table's state does not hold yet that hold it, and going over all of
// them made each single-row write cost as much as the backlog. Like the
// key index (table_log_index.go) it is kept up to date as entries come
// and go (under the log's imu), built at its first lookup, and dropped
// when entries are removed out of order (a failed publish).
type valueIndex struct {
	cols []int                  // the indexed columns (exec.AppendIndexValues)
	at   map[string][]changeRef // values -> the changes holding them, oldest first
}

// indexValues adds en's changes to every value index. Holding imu.
func (l *TableLog) indexValues(en *LogEntry) {
	for _, vi := range l.values {
		vi.add(en)
	}
}

// unindexValues removes en, the oldest entry, from every value index.
// Holding imu.
func (l *TableLog) unindexValues(en *LogEntry) {
	for _, vi := range l.values {
		vi.remove(en)
	}
}

// add indexes en's changes, after those of older entries.
func (vi *valueIndex) add(en *LogEntry) {
	var buf []byte
	for i, ch := range en.changes {
		if AnyNullAt(ch.Row, vi.cols) {
			continue
		}
		buf = exec.AppendIndexValues(buf[:0], ch.Row, vi.cols)
		vi.at[string(buf)] = append(vi.at[string(buf)], changeRef{en, i})
	}
}

// remove takes out en, the oldest entry indexed: its changes are the
// first of the values they hold.
func (vi *valueIndex) remove(en *LogEntry) {
	var buf []byte
	for _, ch := range en.changes {
		if AnyNullAt(ch.Row, vi.cols) {
			continue
		}
		buf = exec.AppendIndexValues(buf[:0], ch.Row, vi.cols)
		refs := vi.at[string(buf)]
		n := 0
		for n < len(refs) && refs[n].en == en {
			n++
		}
		switch {
		case n == len(refs):
			delete(vi.at, string(buf))
		case n > 0:
			vi.at[string(buf)] = refs[n:]
		}
	}
}

// ChangesWithValues returns, in changelog order, the changes among the
// log's entries whose columns cols (none NULL) encode to vals. ok is
// false, and nothing is answered, when the entries changed since version
// (the caller's view of them is no longer the log's).
func (l *TableLog) ChangesWithValues(version uint64, cols []int, vals []byte) (changes []exec.Change, ok bool) {
	l.imu.Lock()
	defer l.imu.Unlock()
	if l.version != version {
		return nil, false
	}
	i := slices.IndexFunc(l.values, func(vi *valueIndex) bool { return slices.Equal(vi.cols, cols) })
	if i < 0 {
		vi := &valueIndex{cols: slices.Clone(cols), at: map[string][]changeRef{}}
		for _, en := range l.entries {
			vi.add(en)
		}
		l.values = append(l.values, vi)
		i = len(l.values) - 1
	}
	refs := l.values[i].at[string(vals)]
	changes = make([]exec.Change, len(refs))
	for j, ref := range refs {
		changes[j] = ref.en.changes[ref.i]
	}
	return changes, true
}

// AnyNullAt says whether row holds NULL in one of cols: such a row holds
// no value of a unique index (NULLs never clash).
func AnyNullAt(row types.Row, cols []int) bool {
	for _, c := range cols {
		if row[c].IsNull() {
			return true
		}
	}
	return false
}
