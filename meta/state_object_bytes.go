package meta

import "streamdb/storage"

// ObjectBytes is Pebble's estimate of the disk size of every state table
// of object obj (0 if it cannot tell). Unlike Sizes it reads no keys, so
// a cluster member's heartbeat can report it every interval.
func (st *State) ObjectBytes(obj uint32) int64 {
	prefix := storage.ObjectStatePrefix(obj)
	n, err := st.store.DB().EstimateDiskUsage(prefix, storage.PrefixEnd(prefix))
	if err != nil {
		return 0
	}
	return int64(n)
}
