package exec

import "streamdb/storage"

// missRule tells an operator that caches a Pebble state table in memory
// whether a key missing from its cache can be in Pebble. It cannot while
// the table was empty when the operator started and the cache has evicted
// nothing since: a miss is then a new key and needs no Pebble read. Without
// this every new group (each new window of a windowed aggregate, say)
// would cost a point lookup that finds nothing.
type missRule struct {
	storeMayHold bool
}

// newMissRule looks at the operator's state table once, at start.
func newMissRule(r storage.Reader, prefix []byte) (missRule, error) {
	held, err := storage.HasPrefix(r, prefix)
	return missRule{storeMayHold: held}, err
}

// mustRead reports whether a cache miss has to be looked up in Pebble.
func (m *missRule) mustRead() bool { return m.storeMayHold }

// evicted records that the cache dropped n entries (now only in Pebble).
func (m *missRule) evicted(n int) {
	if n > 0 {
		m.storeMayHold = true
	}
}
