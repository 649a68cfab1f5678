package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"

	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// A top-N's state under catalog.DataflowTopNStateByKey: one key per
// distinct input row kept,
//
//	prefix + partition key + sort key + row -> varint count, uvarint len(partition key + sort key)
//
// (from catalog.DataflowVNodeKeys on, the vnode of the partition key
// after prefix, topNOp.partKey; the length in the value leaves it out)
// where the sort key is the keyenc encoding of the ORDER BY values, each
// descending one with its bytes complemented (keyenc is prefix-free, so the
// complement reverses its order), and the row is keyenc.AppendRowValue,
// the tie break of rankEntry. So Pebble holds a partition's rows in rank
// order, and its leading rows are a range scan. The length in the value
// finds the row in a key without decoding the sort key.
//
// Under older formats the key is prefix + row (no order), and every row is
// loaded at start and kept in memory.

// sortKeyBytes appends the sort key of e: its ORDER BY values in rank
// order as bytes.
func (op *topNOp) sortKeyBytes(buf []byte, e *rankEntry) []byte {
	for i, k := range op.t.Order {
		start := len(buf)
		buf = op.appendKey(buf, e.keys[i])
		if k.Desc {
			for j := start; j < len(buf); j++ {
				buf[j] = ^buf[j]
			}
		}
	}
	return buf
}

// entryKey is e's state key without the operator's prefix, and the length
// of its partition-and-sort-key part. Under older formats it is the row.
func (op *topNOp) entryKey(pk string, e *rankEntry) (string, int) {
	if !op.byKey {
		return e.enc, 0
	}
	b := make([]byte, 0, len(pk)+len(e.enc)+16)
	b = append(b, pk...)
	b = op.sortKeyBytes(b, e)
	head := len(b)
	return string(append(b, e.enc...)), head
}

// stateValue is the value stored for an entry's count.
func (op *topNOp) stateValue(count int64, head int) []byte {
	v := binary.AppendVarint(nil, count)
	if op.byKey {
		v = binary.AppendUvarint(v, uint64(head))
	}
	return v
}

// decodeState reads a stored entry: key is the state key without the
// operator's prefix. It returns the row and its count.
func (op *topNOp) decodeState(key, v []byte) (types.Row, int64, error) {
	var n int64
	rest, err := readVarint(v, &n)
	if err != nil {
		return nil, 0, fmt.Errorf("top-n state: %w", err)
	}
	enc := key
	if op.byKey {
		head, k := binary.Uvarint(rest)
		if k <= 0 || head > uint64(len(key)) {
			return nil, 0, fmt.Errorf("top-n state: bad row offset")
		}
		enc = key[head:]
	}
	row, _, err := keyenc.DecodeRow(enc, op.inWidth)
	if err != nil {
		return nil, 0, fmt.Errorf("top-n state: %w", err)
	}
	return row, n, nil
}

// topNCache bounds the rows a top-N over a retracting input keeps in
// memory (state.cache.topn-rows-per-operator), under
// DataflowTopNStateByKey. A partition in memory holds every row whose
// state key sorts before its bound (all of them when complete); the rows
// at or past the bound are only in Pebble, or in over while their write
// has not committed. At a barrier, a partition whose rows in memory do not
// reach past its ranked rows reads the next ones from Pebble (refill), so
// a retraction from the top lets the next row in; and, over the limit,
// partitions are cut down to their ranked rows plus one (which shows where
// the ranking ends), then whole partitions leave memory.
//
// Unlike an aggregate's groups, rows may leave memory before their write
// commits: over keeps every write until Pebble has committed it, and every
// read of Pebble (a row past the bound, a refill) is overlaid with it.
type topNCache struct {
	limit groupLimit
	store *storage.Store
	miss  missRule // partitions that may be in Pebble
	// rowMiss: rows past a bound that may be in Pebble (those that left
	// memory or were written past a bound since the start), so that a new
	// row past a bound costs no Pebble read.
	rowMiss missRule
	// over holds, by partition key and then key suffix (sort key and
	// row), the counts written but not committed (epoch) or changed in
	// this epoch past the bound (epoch 0).
	over  map[string]map[string]*overWrite
	rows  int64 // entries in memory
	gauge prometheus.Gauge
	reads uint64 // Pebble reads (point and range) on misses and refills
}

type overWrite struct {
	count int64
	epoch uint64 // 0: not written yet
}

// refillRows is the least number of rows a refill reads.
const refillRows = 64

func newTopNCache(store *storage.Store, prefix []byte, limit groupLimit) (*topNCache, error) {
	c := &topNCache{limit: limit, store: store, over: map[string]map[string]*overWrite{}}
	var err error
	c.miss, err = newMissRule(store.DB(), prefix)
	c.rowMiss = c.miss
	return c, err
}

// partition returns the partition pk from memory, or makes it: empty if
// Pebble cannot hold it, else with its leading rows read and its emitted
// rows computed from them.
func (op *topNOp) partition(pk string) (*topNPartition, error) {
	if p, ok := op.parts[pk]; ok {
		if op.cache != nil {
			op.cache.miss.hit()
		}
		return p, nil
	}
	p := &topNPartition{complete: true}
	c := op.cache
	if c != nil && (c.miss.mustRead(pk) || c.over[pk] != nil) {
		p.complete = false
		if err := op.ensure(pk, p); err != nil {
			return nil, err
		}
		p.prev = rankedRows(op.t, &p.rows)
	}
	op.parts[pk] = p
	return p, nil
}

// ensure reads rows of p from Pebble until its rows in memory reach past
// its ranked rows, or it has them all.
func (op *topNOp) ensure(pk string, p *topNPartition) error {
	for !p.complete && keptEntries(op.t, &p.rows) >= p.rows.Len() {
		want := refillRows + 2*int(op.t.Offset+op.t.Count)
		if err := op.refill(pk, p, want); err != nil {
			return err
		}
	}
	return nil
}

// refill reads up to want stored entries of p at or past its bound, in key
// order, overlaid with the writes in over, into memory, and moves the
// bound past them.
func (op *topNOp) refill(pk string, p *topNPartition, want int) error {
	c := op.cache
	c.reads++
	base := op.partKey(nil, pk)
	lower := append(append([]byte(nil), base...), p.bound...)
	it, err := c.store.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: storage.PrefixEnd(base)})
	if err != nil {
		return err
	}
	type found struct {
		suffix string
		v      []byte
	}
	var got []found
	var last []byte
	for it.First(); it.Valid() && len(got) < want; it.Next() {
		suffix := string(it.Key()[len(base):])
		got = append(got, found{suffix, append([]byte(nil), it.Value()...)})
	}
	exhausted := !it.Valid()
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	it.Close()
	if !exhausted {
		last = []byte(got[len(got)-1].suffix)
	}
	over := c.over[pk]
	for _, f := range got {
		if _, ok := over[f.suffix]; ok {
			continue // over is newer
		}
		row, n, err := op.decodeState([]byte(pk+f.suffix), f.v)
		if err != nil {
			return err
		}
		if err := op.load(p, row, n); err != nil {
			return err
		}
	}
	for suffix, w := range over {
		if w.count == 0 || suffix < string(p.bound) || (!exhausted && suffix > string(last)) {
			continue
		}
		row, _, err := keyenc.DecodeRow([]byte(suffix[op.sortKeyLen(suffix):]), op.inWidth)
		if err != nil {
			return fmt.Errorf("top-n state: %w", err)
		}
		if err := op.load(p, row, w.count); err != nil {
			return err
		}
	}
	if exhausted {
		p.complete, p.bound = true, nil
	} else {
		p.bound = append(last, 0) // the least key after last
	}
	return nil
}

// sortKeyLen is the length of the sort key at the front of suffix.
func (op *topNOp) sortKeyLen(suffix string) int {
	b := []byte(suffix)
	n := 0
	for _, k := range op.t.Order {
		rest := b[n:]
		if k.Desc {
			rest = append([]byte(nil), rest...)
			for j := range rest {
				rest[j] = ^rest[j]
			}
		}
		_, after, err := keyenc.Decode(rest)
		if err != nil {
			return n
		}
		n += len(rest) - len(after)
	}
	return n
}

// load puts a stored row with its count into p's rows.
func (op *topNOp) load(p *topNPartition, row types.Row, n int64) error {
	e, err := newRankEntry(op.t.Order, row)
	if err != nil {
		return fmt.Errorf("top-n state: %w", err)
	}
	before := p.rows.Len()
	p.rows.add(op.t.Order, e, n)
	op.cache.rows += int64(p.rows.Len() - before)
	return nil
}

// pastBound reports whether the entry with key suffix lies past p's rows
// in memory.
func (p *topNPartition) pastBound(suffix string) bool {
	return !p.complete && suffix >= string(p.bound)
}

// storedCount is the count of a row past the bound, before n is added to
// it: its newest write, or what Pebble holds. Over an input whose rows
// are a set, a row is stored (count 1) exactly when it is retracted, so
// Pebble is not read.
func (op *topNOp) storedCount(pk, suffix string, n int64) (int64, error) {
	c := op.cache
	if w, ok := c.over[pk][suffix]; ok {
		return w.count, nil
	}
	if op.setInput {
		if n < 0 {
			return 1, nil
		}
		return 0, nil
	}
	if !c.rowMiss.mustRead(pk + suffix) {
		return 0, nil
	}
	c.reads++
	v, found, err := c.store.Get(append(op.partKey(nil, pk), suffix...))
	if err != nil || !found {
		return 0, err
	}
	var stored int64
	_, err = readVarint(v, &stored)
	return stored, err
}

// overwrite records a count changed in this epoch past the bound.
func (c *topNCache) overwrite(pk, suffix string, n int64) {
	m := c.over[pk]
	if m == nil {
		m = map[string]*overWrite{}
		c.over[pk] = m
	}
	m[suffix] = &overWrite{count: n}
}

// written records the writes of epoch (called at its barrier, for each
// changed key) and forgets those Pebble has committed.
func (c *topNCache) written(pk, suffix string, n int64, epoch uint64) {
	c.overwrite(pk, suffix, n)
	c.over[pk][suffix].epoch = epoch
}

// forgetCommitted drops the writes Pebble has committed from over.
func (c *topNCache) forgetCommitted() {
	committed := c.limit.committed()
	for pk, m := range c.over {
		for s, w := range m {
			if w.epoch != 0 && w.epoch <= committed {
				delete(m, s)
			}
		}
		if len(m) == 0 {
			delete(c.over, pk)
		}
	}
}

// evict cuts the rows in memory down to three quarters of the limit once
// it is exceeded: first each partition to its ranked rows plus one, then
// whole partitions.
func (op *topNOp) evict() {
	c := op.cache
	defer func() {
		if c.gauge != nil {
			c.gauge.Set(float64(c.rows))
		}
	}()
	limit := c.limit.bound(c.rows)
	if limit <= 0 || c.rows <= limit {
		return
	}
	target := limit - limit/4
	for pk, p := range op.parts {
		if c.rows <= target {
			return
		}
		keep := keptEntries(op.t, &p.rows) + 1
		if p.rows.Len() <= keep {
			continue
		}
		dropped := p.rows.truncate(keep)
		c.rows -= int64(len(dropped))
		for i, e := range dropped {
			k, _ := op.entryKey(pk, e)
			c.rowMiss.evictedKey(k)
			if i == 0 {
				p.bound, p.complete = []byte(k[len(pk):]), false
			}
		}
	}
	for pk, p := range op.parts {
		if c.rows <= target {
			return
		}
		c.rows -= int64(p.rows.Len())
		c.miss.evictedKey(pk)
		p.rows.each(func(e *rankEntry) bool {
			k, _ := op.entryKey(pk, e)
			c.rowMiss.evictedKey(k)
			return true
		})
		delete(op.parts, pk)
	}
}

// beyond applies n to the row of e in partition pk past p's bound: its
// count is read, changed and kept in over until written.
func (op *topNOp) beyond(key string, ce changedEntry, n int64) error {
	pk, suffix := key[:ce.pkLen], key[ce.pkLen:]
	cur, err := op.storedCount(pk, suffix, n)
	if err != nil {
		return err
	}
	ce.ent.count = cur + n
	op.cache.overwrite(pk, suffix, ce.ent.count)
	op.cache.rowMiss.evictedKey(key)
	op.changed[key] = ce
	return nil
}
