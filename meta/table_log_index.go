package meta

import (
	"slices"

	"streamdb/exec"
)

// keyIndex finds the newest change to a row among a table log's entries
// without scanning them: a single-row write to a keyed table checks its
// key against the commits the table's state does not hold yet, and
// rebuilding a map of those for every statement made each write cost as
// much as the backlog. It is kept up to date as entries come and go
// (under the log's imu) and dropped when entries are removed out of
// order (a failed publish); the next lookup rebuilds it.
type keyIndex struct {
	cols   []int                // the row identity's columns (RowKey)
	newest map[string]changeRef // row identity -> its newest change
}

// changeRef is one change of a log entry.
type changeRef struct {
	en *LogEntry
	i  int
}

// indexEntry adds en, the newest entry, to the log's indexes of keys and
// values. Holding imu.
func (l *TableLog) indexEntry(en *LogEntry) {
	l.indexKeys(en)
	l.indexValues(en)
}

// unindexEntry removes en, the oldest entry, from the log's indexes.
// Holding imu.
func (l *TableLog) unindexEntry(en *LogEntry) {
	l.unindexKeys(en)
	l.unindexValues(en)
}

// indexKeys adds en's changes to the key index, newest last. Holding imu.
func (l *TableLog) indexKeys(en *LogEntry) {
	ix := l.index
	if ix == nil {
		return
	}
	en.keys = make([]string, len(en.changes))
	for i, ch := range en.changes {
		k := string(RowKey(ix.cols, ch.Row))
		en.keys[i] = k
		ix.newest[k] = changeRef{en, i}
	}
}

// unindexKeys removes en, the oldest entry, from the key index. Holding
// imu.
func (l *TableLog) unindexKeys(en *LogEntry) {
	if l.index == nil {
		return
	}
	for i, k := range en.keys {
		if ref := l.index.newest[k]; ref.en == en && ref.i == i {
			delete(l.index.newest, k)
		}
	}
	en.keys = nil
}

// NewestChange returns the newest change among the log's entries to the
// row with identity key under cols, if there is one. ok is false, and
// nothing is answered, when the entries changed since version (the
// caller's view of them is no longer the log's).
func (l *TableLog) NewestChange(version uint64, cols []int, key []byte) (ch exec.Change, found, ok bool) {
	l.imu.Lock()
	defer l.imu.Unlock()
	if l.version != version {
		return exec.Change{}, false, false
	}
	if l.index == nil || !slices.Equal(l.index.cols, cols) {
		l.index = &keyIndex{cols: slices.Clone(cols), newest: map[string]changeRef{}}
		for _, en := range l.entries {
			l.indexKeys(en)
		}
	}
	ref, found := l.index.newest[string(key)]
	if !found {
		return exec.Change{}, false, true
	}
	return ref.en.changes[ref.i], true, true
}
