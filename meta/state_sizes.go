package meta

import (
	"encoding/binary"

	"streamdb/storage"
)

// StateSize is the size of one state table of an object: state table 0
// is the object's own rows, the others belong to its operators in the
// order the dataflow builds them, and 65535 is the record of rows that
// failed inside a view.
type StateSize struct {
	Table uint16
	// Keys counts the table's keys; Exact is false when counting stopped
	// at stateScanLimit, and then Bytes is Pebble's estimate of the
	// table's size on disk rather than the sum of its keys and values.
	Keys  int64
	Bytes int64
	Exact bool
}

// stateScanLimit bounds the keys counted per state table, so that reading
// the sizes stays cheap over large state.
const stateScanLimit = 1_000_000

// Sizes measures every state table of object obj in the committed state
// (a Pebble iterator sees whole epochs).
func (st *State) Sizes(obj uint32) []StateSize {
	db := st.store.DB()
	prefix := storage.ObjectStatePrefix(obj)
	it, err := db.NewIter(nil)
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []StateSize
	for valid := it.SeekGE(prefix); valid; {
		k := it.Key()
		if len(k) < len(prefix)+2 || string(k[:len(prefix)]) != string(prefix) {
			break
		}
		s := StateSize{Table: binary.BigEndian.Uint16(k[len(prefix):]), Exact: true}
		tablePrefix := storage.StatePrefix(obj, s.Table)
		end := storage.PrefixEnd(tablePrefix)
		for valid = true; valid && string(it.Key()[:min(len(it.Key()), len(tablePrefix))]) == string(tablePrefix); valid = it.Next() {
			if s.Keys == stateScanLimit {
				s.Exact = false
				break
			}
			s.Keys++
			s.Bytes += int64(len(it.Key()) + len(it.Value()))
		}
		if !s.Exact {
			if n, err := db.EstimateDiskUsage(tablePrefix, end); err == nil {
				s.Bytes = int64(n)
			}
			valid = it.SeekGE(end)
		}
		out = append(out, s)
	}
	return out
}

// TableBytes is Pebble's estimate of the disk size of state table t of
// object obj (0 if it cannot tell).
func (st *State) TableBytes(obj uint32, t uint16) int64 {
	prefix := storage.StatePrefix(obj, t)
	n, err := st.store.DB().EstimateDiskUsage(prefix, storage.PrefixEnd(prefix))
	if err != nil {
		return 0
	}
	return int64(n)
}
