package exec

import (
	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// topNOp keeps a TopN current under insertions and retractions. Every
// input row is kept (with its multiplicity) in its partition, sorted in
// rank order, because a retraction from the top lets the next row in. On
// a barrier, each partition touched in the epoch recomputes its top rows
// and emits the difference from what it emitted before: deletes of rows
// that left (or whose rank changed), then inserts of rows that entered.
// All deletes of an epoch precede all inserts, so a keyed materialization
// (partition keys + row_number) never sees two live rows with one key.
//
// Over an append-only input (a stream) no row ever leaves, so a row that
// ranks past the bound can never come back: such rows are dropped from
// memory and state (prune), and a partition holds about Offset+Count rows.
//
// State: one key per distinct input row kept, its value the row's
// multiplicity; the key layout depends on the view's format (see
// op_topn_state.go). What was emitted is not stored: it is a function of
// the rows, recomputed when the state is loaded.
type topNOp struct {
	t *plan.TopN
	// appendKey encodes partition and sort keys (keyAppender).
	appendKey  func([]byte, types.Datum) []byte
	appendOnly bool // the input never retracts: prune rows past the bound
	// setInput: no input row is ever present twice (the input has a
	// unique key), so every stored count is 1.
	setInput bool
	inWidth  int
	prefix   []byte
	byKey    bool // state keyed by partition and rank (DataflowTopNStateByKey)
	// vnodes is the view's vnode count when keys carry the vnode of
	// their partition key after prefix (partKey); 0: none.
	vnodes  int
	parts   map[string]*topNPartition
	dirty   map[string]*topNPartition
	changed map[string]changedEntry // entry key -> entry whose count changed this epoch
	next    Operator
	errs    *viewErrors
	// cache, when set, bounds the rows in memory; nil: every row is
	// loaded at start and kept.
	cache *topNCache
	// closer, when set, frees partitions of closed windows; byEnd
	// indexes open partitions by their window's end (op_topn_window.go).
	closer *windowCloser
	byEnd  map[int64][]string
}

// changedEntry is an entry to write at the barrier. Under
// DataflowTopNStateByKey its key's first pkLen bytes are its partition
// key, and its first head bytes the partition and sort keys.
type changedEntry struct {
	ent         *rankEntry
	pkLen, head int
}

type topNPartition struct {
	rows rankList
	prev []types.Row // rows emitted so far
	// Under a cache (topNCache): complete is false when rows whose key
	// suffix sorts at or after bound are only in Pebble.
	complete bool
	bound    []byte
}

// topNConfig is how a top-N keeps its state: the view's format and the
// cache bound that applies to it.
type topNConfig struct {
	dataflow catalog.FormatVersion
	limit    groupLimit
	setInput bool // see topNOp.setInput
	// vnodes is the view's vnode count (catalog.StateVNodes); 0: that of
	// a view of format dataflow.
	vnodes int
}

func newTopNOp(t *plan.TopN, appendOnly bool, prefix []byte, store *storage.Store, cfg topNConfig, next Operator) (*topNOp, error) {
	op := &topNOp{
		t: t, appendOnly: appendOnly && t.Count >= 0, inWidth: len(t.Input.Schema()), prefix: prefix,
		byKey: cfg.dataflow >= catalog.DataflowTopNStateByKey, setInput: cfg.setInput,
		parts: map[string]*topNPartition{}, dirty: map[string]*topNPartition{},
		changed: map[string]changedEntry{}, next: next,
		appendKey: keyAppender(cfg.dataflow),
		vnodes:    cfg.vnodes,
	}
	if op.vnodes == 0 {
		op.vnodes = defaultVNodes(cfg.dataflow)
	}
	// The cache serves a top-N whose partitions must keep every row (a
	// retracting input) and whose ranked rows are bounded (LIMIT or a
	// rank filter); an append-only one prunes its partitions instead.
	if op.byKey && !op.appendOnly && t.Count >= 0 && cfg.limit.max != nil && cfg.limit.max() > 0 {
		var err error
		if op.cache, err = newTopNCache(store, prefix, cfg.limit); err != nil {
			return nil, err
		}
		return op, nil
	}
	skip := len(prefix) + vnodeSkip(op.vnodes)
	err := storage.ScanPrefix(store.DB(), prefix, func(k, v []byte) error {
		row, n, err := op.decodeState(k[skip:], v)
		if err != nil {
			return err
		}
		_, _, _, err = op.apply(row, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, p := range op.parts {
		p.prev = rankedRows(t, &p.rows)
	}
	return op, nil
}

// apply adds n to the multiplicity of row. It returns the row's
// partition key, its partition and its entry (count 0 when gone).
func (op *topNOp) apply(row types.Row, n int64) (string, *topNPartition, *rankEntry, error) {
	pk, err := partitionKey(op.t, row, op.appendKey)
	if err != nil {
		return "", nil, nil, rowError{err}
	}
	e, err := newRankEntry(op.t.Order, row)
	if err != nil {
		return "", nil, nil, rowError{err}
	}
	_, known := op.parts[pk]
	p, err := op.partition(pk)
	if err != nil {
		return "", nil, nil, err
	}
	if !known {
		op.trackEnd(pk, row)
	}
	key, head := op.entryKey(pk, e)
	ce := changedEntry{ent: e, pkLen: len(pk), head: head}
	if op.cache != nil && p.pastBound(key[len(pk):]) {
		return pk, p, e, op.beyond(key, ce, n)
	}
	before := p.rows.Len()
	ce.ent = p.rows.add(op.t.Order, e, n)
	if op.cache != nil {
		op.cache.rows += int64(p.rows.Len() - before)
	}
	op.changed[key] = ce
	return pk, p, ce.ent, nil
}

func (op *topNOp) Push(c *Chunk) error {
	for i, row := range c.Rows {
		pk, p, _, err := op.apply(row, int64(c.Signs[i]))
		if re, ok := err.(rowError); ok {
			// apply evaluates the row's partition and sort keys before
			// it changes anything, so a row that fails leaves no trace.
			if err := op.errs.skip("top-n", re.err); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		op.dirty[pk] = p
		// Prune in bulk, not per row: a backfill epoch can bring many
		// rows to one partition.
		if op.appendOnly && int64(p.rows.Len()) > 2*(op.t.Offset+op.t.Count)+64 {
			op.prune(pk, p)
		}
	}
	return nil
}

// rowError is an error evaluating a row's partition or sort keys, which
// skips the row (viewErrors), unlike an error reading state.
type rowError struct{ err error }

func (e rowError) Error() string { return e.err.Error() }

// prune drops the rows of p that rank past the bound (append-only input
// only), recording their state keys for deletion.
func (op *topNOp) prune(pk string, p *topNPartition) {
	for _, e := range p.rows.truncate(keptEntries(op.t, &p.rows)) {
		e.count = 0
		key, head := op.entryKey(pk, e)
		op.changed[key] = changedEntry{ent: e, pkLen: len(pk), head: head}
	}
}

func (op *topNOp) Barrier(e Epoch) error {
	dels, ins := &Chunk{}, &Chunk{}
	for pk, p := range op.dirty {
		if op.appendOnly {
			op.prune(pk, p)
		}
		if op.cache != nil {
			if err := op.ensure(pk, p); err != nil {
				return err
			}
		}
		cur := rankedRows(op.t, &p.rows)
		diffRows(p.prev, cur, dels, ins)
		p.prev = cur
		if p.rows.Len() == 0 && p.complete {
			delete(op.parts, pk)
		}
	}
	clear(op.dirty)
	for k, ce := range op.changed {
		key := append(op.partKey(nil, k[:ce.pkLen]), k[ce.pkLen:]...)
		var err error
		if ce.ent.count == 0 {
			err = e.Batch.Delete(key, nil)
		} else {
			err = e.Batch.Set(key, op.stateValue(ce.ent.count, ce.head), nil)
		}
		if err != nil {
			return err
		}
		if op.cache != nil {
			op.cache.written(k[:ce.pkLen], k[ce.pkLen:], ce.ent.count, e.ID)
		}
	}
	clear(op.changed)
	if err := op.freeClosed(e); err != nil {
		return err
	}
	if op.cache != nil {
		op.cache.forgetCommitted()
		op.evict()
	}
	for i, row := range ins.Rows {
		dels.Append(row, ins.Signs[i])
	}
	if dels.Len() > 0 {
		if err := op.next.Push(dels); err != nil {
			return err
		}
	}
	return op.next.Barrier(e)
}

// diffRows appends to dels the rows of prev missing from cur and to ins
// the rows of cur missing from prev, as multisets.
func diffRows(prev, cur []types.Row, dels, ins *Chunk) {
	counts := map[string]int{}
	for _, r := range prev {
		counts[string(keyenc.AppendRowValue(nil, r))]++
	}
	for _, r := range cur {
		k := string(keyenc.AppendRowValue(nil, r))
		if counts[k] > 0 {
			counts[k]--
			continue
		}
		ins.Append(r, Insert)
	}
	for _, r := range prev {
		k := string(keyenc.AppendRowValue(nil, r))
		if counts[k] > 0 {
			counts[k]--
			dels.Append(r, Delete)
		}
	}
}

// partKey appends to buf the key prefix of partition pk's entries: the
// table's prefix, the vnode of pk (from DataflowVNodeKeys on), pk.
func (op *topNOp) partKey(buf []byte, pk string) []byte {
	return appendVNodeKey(buf, op.prefix, op.vnodes, pk)
}
