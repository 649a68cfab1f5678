package exec

import (
	"github.com/prometheus/client_golang/prometheus"

	"streamdb/storage"
	"streamdb/types"
)

// joinCache bounds the join keys a join keeps in memory per side
// (state.cache.join-keys-per-side), under joinStateByKey: a key's rows are
// read from Pebble when a row with that key arrives on either side and it
// is not cached, and keys leave the cache at barriers, down to three
// quarters of the bound, as aggregate groups do (evictCommitted). The same
// rule holds: a bucket leaves only once Pebble has committed its last
// write, since reading it back before would see stale rows, and an
// emptied bucket stays cached until its deletion commits.
//
// Under the older formats, and with the bound at 0, every row is read at
// start and kept (lazy is false); so too when a watermark frees the state
// (joinExpiry), which needs every open row indexed by its deadline.
type joinCache struct {
	lazy  bool
	limit groupLimit
	miss  [2]missRule
	store storage.Reader
	// rows counts the entries in memory (each distinct row once);
	// gauge reports it at barriers, when set.
	rows  int64
	gauge prometheus.Gauge
	// reads counts buckets read from Pebble on a miss.
	reads uint64
	// expire, when set, frees rows the watermarks say can match no more.
	expire *joinExpiry
}

// start reads all of the join's state when the cache is unbounded, else
// only looks whether each side has state in Pebble (see missRule).
func (c *joinCache) start(op *joinOp, store storage.Reader, limit groupLimit) error {
	c.store, c.limit = store, limit
	c.lazy = limit.max != nil && limit.max() > 0
	if !c.lazy {
		return c.loadAll(op)
	}
	for side := range byte(2) {
		var err error
		if c.miss[side], err = newMissRule(store, append(append([]byte(nil), op.prefix...), side)); err != nil {
			return err
		}
	}
	return nil
}

// loadAll reads every stored row of the keys not in memory yet (the
// cached ones are as new as Pebble's, or newer).
func (c *joinCache) loadAll(op *joinOp) error {
	var cached [2]map[string]bool
	for side := range 2 {
		cached[side] = make(map[string]bool, len(op.state[side]))
		for k := range op.state[side] {
			cached[side][k] = true
		}
	}
	return storage.ScanPrefix(c.store, op.prefix, func(k, v []byte) error {
		k = k[len(op.prefix):]
		if after := 1 + vnodeSkip(op.vnodes); len(k) >= after && k[0] <= 1 {
			if jk, _, err := readLenPrefixed(k[after:]); err == nil && cached[k[0]][string(jk)] {
				return nil
			}
		}
		_, err := op.restoreKeyedPage(k, v)
		return err
	})
}

// unbound makes the cache keep every row from now on, reading those only
// in Pebble.
func (c *joinCache) unbound(op *joinOp) error {
	if !c.lazy {
		return nil
	}
	if err := c.loadAll(op); err != nil {
		return err
	}
	c.lazy = false
	return nil
}

// restored counts e, read from Pebble, and indexes it for expiry.
func (c *joinCache) restored(op *joinOp, e *joinEntry) error {
	c.rows++
	if c.expire != nil {
		row, err := op.rowOf(e)
		if err != nil {
			return err
		}
		c.expire.track(op, e, row)
		e.row = nil // the deadline is read; keep the row encoded
	}
	return nil
}

// added counts e, new on side with the decoded row, and indexes it for
// expiry.
func (c *joinCache) added(op *joinOp, side byte, e *joinEntry, row types.Row) {
	c.rows++
	if c.expire != nil {
		c.expire.track(op, e, row)
	}
}

// removed uncounts e, whose count fell to zero.
func (c *joinCache) removed(e *joinEntry) { c.rows-- }

// markWritten records epoch as the last write of every bucket with a row
// written at this barrier.
func (c *joinCache) markWritten(op *joinOp, epoch uint64) {
	if !c.lazy {
		return
	}
	for _, e := range op.dirty {
		if b := op.state[e.side][e.key]; b != nil {
			b.written = epoch
		}
	}
}

// evict drops committed buckets beyond the bound, per side, and reports
// the rows held.
func (c *joinCache) evict(op *joinOp) {
	if c.lazy {
		limit := c.limit.bound(int64(max(len(op.state[0]), len(op.state[1]))))
		for side := range byte(2) {
			m := op.state[side]
			if limit <= 0 || int64(len(m)) <= limit {
				continue
			}
			target := limit - limit/4
			committed := c.limit.committed()
			for k, b := range m {
				if int64(len(m)) <= target {
					break
				}
				if b.written > committed {
					continue
				}
				for range b.all {
					c.rows--
				}
				c.miss[side].evictedKey(k)
				delete(m, k)
			}
		}
	}
	if c.gauge != nil {
		c.gauge.Set(float64(c.rows))
	}
}
