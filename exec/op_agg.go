package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// aggOp is a streaming hash aggregation. It emits changes to its output
// only when a barrier passes: for each group touched in the epoch, a delete
// of the row it emitted before and an insert of the new one. Holding back
// to the barrier turns many updates of a hot group into one change.
//
// Groups live in the operator's state table in Pebble; memory holds a
// bounded cache of them (state.cache.groups-per-operator). A group missing
// from memory is read from Pebble when a row touches it. Only groups whose
// last write Pebble has committed may be evicted: an epoch's writes commit
// after its barrier, so an evicted group read back before that would be
// stale. For the same reason an emptied group stays cached, empty, until
// its deletion commits. With the limit at 0, or when a watermark closes
// windows, every group is loaded at start and kept.
type aggOp struct {
	// reemit: send every group's committed output once, at the first
	// barrier (an altered view's kept aggregate, alter.go).
	reemit     bool
	groupBy    []expr.Expr
	calls      []plan.AggCall
	appendOnly bool
	dataflow   catalog.FormatVersion // the view's format (catalog.Dataflow*)
	prefix     []byte                // state table: group key -> row count + accumulator states
	// vnodes is the view's vnode count when the table's keys carry a
	// vnode of the group key after prefix (appendVNodeKey); 0: none.
	vnodes int
	groups map[string]*aggGroup
	dirty  []*aggGroup // groups changed in this epoch, each once
	next   Operator

	// Scratch buffers reused across rows and barriers (Batch.Set copies).
	keyVals  types.Row
	keyBuf   []byte
	stateKey []byte
	stateVal []byte
	encBuf   []byte // an output row's encoding

	store *storage.Store
	limit groupLimit
	// lazy: groups are read from Pebble on a miss and may be evicted.
	lazy bool
	miss missRule

	// closer, when set, frees groups whose window the watermark closed;
	// byEnd indexes open groups by their window's end.
	closer *windowCloser
	byEnd  map[int64][]string

	// errs records rows whose group key or argument fails to evaluate,
	// which are skipped (see viewErrors); nil stops the view on such a
	// row. argVals is scratch for a row's argument values.
	errs    *viewErrors
	argVals []types.Datum

	// extrema, when set, holds the values of min and max over a
	// retracting input (catalog.DataflowExtremaByValue).
	extrema *extremaTable

	// appendKey encodes a group key value (keyAppender). keyInState: the
	// key groups equal intervals written differently ('1 day',
	// '24:00:00'), so the group's state starts with the value encoding
	// of the key of the row that created the group, which its output
	// shows, rather than the key's decoding.
	appendKey  func([]byte, types.Datum) []byte
	keyInState bool
}

// groupLimit is how an aggregate learns its cache bound and what Pebble
// has committed.
type groupLimit struct {
	max func() int64 // groups to keep in memory; 0: all
	// report, if set, tells the budget the entries the cache holds
	// (memoryBudget).
	report    func(held int64)
	committed func() uint64 // newest epoch committed to Pebble
}

// bound reports that the cache holds held entries and returns its limit
// (0: none). Caches call it at every barrier.
func (l groupLimit) bound(held int64) int64 {
	if l.report != nil {
		l.report(held)
	}
	if l.max == nil {
		return 0
	}
	return l.max()
}

// evictCommitted drops entries of an operator's cache (in map order, which is
// random) down to three quarters of the limit once it is exceeded, and
// tells miss the keys it dropped. It keeps entries whose last write,
// written(v), Pebble has not committed: reading one back from Pebble would
// see stale state.
func evictCommitted[V any](l groupLimit, cache map[string]V, written func(V) uint64, miss *missRule) {
	limit := l.bound(int64(len(cache)))
	if limit <= 0 || int64(len(cache)) <= limit {
		return
	}
	target := limit - limit/4
	committed := l.committed()
	for k, v := range cache {
		if int64(len(cache)) <= target {
			break
		}
		if written(v) <= committed {
			miss.evictedKey(k)
			delete(cache, k)
		}
	}
}

type aggGroup struct {
	ks      string // the group's key, encoded: its map key and state key suffix
	dirty   bool
	vn      uint16 // the vnode of ks (aggOp.vnodes), which its state key starts with
	key     types.Row
	rows    int64 // input rows in the group (weight sum)
	accs    []Accumulator
	written uint64 // epoch of the group's last write to Pebble
	// prev is the output row last emitted, if emitted, encoded
	// (keyenc.AppendRowValue): bytes, which the collector does not scan,
	// rather than datums; groups are most of a GROUP BY's heap.
	prev    []byte
	emitted bool
}

// newAggOp builds the aggregate of a view of layout dataflow, which fixes
// its accumulators' state encoding (see newAccumulator).
func newAggOp(a *plan.Aggregate, appendOnly bool, dataflow catalog.FormatVersion, prefix []byte, store *storage.Store, limit groupLimit, next Operator) (*aggOp, error) {
	return newAggOpWith(a, appendOnly, dataflow, prefix, defaultVNodes(dataflow), store, limit, nil, next)
}

// storedExtremeCall reports whether call is a min or max whose values an
// extrema table keeps (the i-th call of an aggregate over a retracting
// input).
func storedExtremeCall(call plan.AggCall, i int, appendOnly bool) bool {
	return (call.Func == "min" || call.Func == "max") && !call.Distinct && !appendOnly && i < 256
}

// newAggOpWith is newAggOp with an extrema table for its min and max
// calls (nil: they keep their values in the group's state), its keys
// carrying vnodes of vnodes (the view's catalog.StateVNodes).
func newAggOpWith(a *plan.Aggregate, appendOnly bool, dataflow catalog.FormatVersion, prefix []byte, vnodes int, store *storage.Store, limit groupLimit, extrema *extremaTable, next Operator) (*aggOp, error) {
	op := &aggOp{
		groupBy: a.GroupBy, calls: a.Aggs, appendOnly: appendOnly, dataflow: dataflow, prefix: prefix, vnodes: vnodes,
		groups: map[string]*aggGroup{}, next: next,
		store: store, limit: limit,
		lazy:      limit.max != nil && limit.max() > 0,
		extrema:   extrema,
		appendKey: keyAppender(dataflow),
	}
	if dataflow >= catalog.DataflowIntervalSpans {
		op.keyInState = slices.ContainsFunc(a.GroupBy, func(e expr.Expr) bool { return e.Type() == types.Interval })
	}
	if op.lazy {
		var err error
		if op.miss, err = newMissRule(store.DB(), prefix); err != nil {
			return nil, err
		}
	} else if err := op.loadAll(); err != nil {
		return nil, err
	}
	if len(a.GroupBy) == 0 {
		g, err := op.group("", types.Row{})
		if err != nil {
			return nil, err
		}
		if !g.emitted {
			// A global aggregate has one row even over no input (count 0).
			op.markDirty(g)
		}
	}
	return op, nil
}

// loadAll reads every group of the state table into memory.
func (op *aggOp) loadAll() error {
	skip := len(op.prefix) + vnodeSkip(op.vnodes)
	return storage.ScanPrefix(op.store.DB(), op.prefix, func(k, v []byte) error {
		ks := string(k[skip:])
		if _, ok := op.groups[ks]; ok {
			return nil // the cached copy is newer or the same
		}
		key, _, err := keyenc.DecodeRow(k[skip:], len(op.groupBy))
		if err != nil {
			return err
		}
		g, err := op.decodeGroup(key, v)
		if err != nil {
			return err
		}
		g.ks, g.vn = ks, vnodeOf(ks, op.vnodes)
		op.groups[ks] = g
		return nil
	})
}

func (op *aggOp) decodeGroup(key types.Row, v []byte) (*aggGroup, error) {
	if op.keyInState {
		stored, rest, err := keyenc.DecodeRow(v, len(op.groupBy))
		if err != nil {
			return nil, fmt.Errorf("aggregate state: group key: %w", err)
		}
		key, v = stored, rest
	}
	g := op.newGroup(key)
	if err := g.unmarshal(v); err != nil {
		return nil, fmt.Errorf("aggregate state: %w", err)
	}
	if cur := op.output(g); cur != nil {
		g.prev, g.emitted = keyenc.AppendRowValue(nil, cur), true
	}
	return g, nil
}

// group returns the group under ks (key is its decoded form), from memory,
// from Pebble, or new.
func (op *aggOp) group(ks string, key types.Row) (*aggGroup, error) {
	if g, ok := op.groups[ks]; ok {
		op.miss.hit()
		return g, nil
	}
	var g *aggGroup
	if op.lazy && op.miss.mustRead(ks) {
		v, found, err := op.store.Get(op.groupKey(nil, ks))
		if err != nil {
			return nil, err
		}
		if found {
			if g, err = op.decodeGroup(key, v); err != nil {
				return nil, err
			}
		}
	}
	if g == nil {
		g = op.newGroup(key)
	}
	g.ks, g.vn = ks, vnodeOf(ks, op.vnodes)
	op.groups[ks] = g
	op.trackEnd(ks, g)
	return g, nil
}

func (op *aggOp) newGroup(key types.Row) *aggGroup {
	g := &aggGroup{key: key, accs: make([]Accumulator, len(op.calls))}
	var ks string
	if op.extrema != nil {
		var kb []byte
		for _, v := range key {
			kb = op.appendKey(kb, v)
		}
		ks = string(kb)
	}
	for i, c := range op.calls {
		if op.extrema != nil && storedExtremeCall(c, i, op.appendOnly) {
			g.accs[i] = &storedExtremeAcc{max: c.Func == "max", t: op.extrema, part: ks + string([]byte{byte(i)})}
			continue
		}
		g.accs[i] = newAccumulator(c, op.appendOnly, op.dataflow)
	}
	return g
}

// Push folds each change into its group. Everything a row needs (its
// argument values, its group key) is evaluated before any state changes,
// so a row that fails to evaluate is skipped whole (see viewErrors).
func (op *aggOp) Push(c *Chunk) error {
	if len(op.argVals) != len(op.calls) {
		op.argVals = make([]types.Datum, len(op.calls))
	}
	vals := op.argVals
rows:
	for i, row := range c.Rows {
		for j, call := range op.calls {
			switch a := call.Arg.(type) {
			case nil:
				vals[j] = types.Null
			case *expr.ColRef:
				vals[j] = row[a.Idx]
			default:
				v, err := a.Eval(row)
				if err != nil {
					if err := op.errs.skip("aggregate", err); err != nil {
						return err
					}
					continue rows
				}
				vals[j] = v
			}
		}
		g, err := op.groupOf(row)
		if err != nil {
			// A group key that fails to evaluate is the row's error; a
			// failed read of the group's state is not, and stops the view.
			if err := op.errs.skip("aggregate", err); err != nil {
				return err
			}
			continue
		}
		sign := int64(c.Signs[i])
		if err := op.add(g, vals, sign); err != nil {
			return err
		}
		g.rows += sign
		op.markDirty(g)
	}
	return nil
}

// add folds one row's argument values into g's accumulators. If an
// accumulator refuses a value with a row's error, the ones before it are
// taken back and the row is skipped; if taking back fails, the view stops.
func (op *aggOp) add(g *aggGroup, vals []types.Datum, sign int64) error {
	for j, v := range vals {
		err := g.accs[j].Add(v, sign)
		if err == nil {
			continue
		}
		if !skippable(err) || op.errs == nil {
			return err
		}
		for k := j - 1; k >= 0; k-- {
			if undo := g.accs[k].Add(vals[k], -sign); undo != nil {
				return err
			}
		}
		return op.errs.skip("aggregate", err)
	}
	return nil
}

// groupOf finds (or makes) the group of an input row. It allocates only
// for a group not in memory.
func (op *aggOp) groupOf(row types.Row) (*aggGroup, error) {
	op.keyVals = op.keyVals[:0]
	op.keyBuf = op.keyBuf[:0]
	for _, e := range op.groupBy {
		v, err := e.Eval(row)
		if err != nil {
			return nil, err
		}
		op.keyVals = append(op.keyVals, v)
		op.keyBuf = op.appendKey(op.keyBuf, v)
	}
	if g, ok := op.groups[string(op.keyBuf)]; ok {
		op.miss.hit()
		return g, nil
	}
	return op.group(string(op.keyBuf), append(types.Row{}, op.keyVals...))
}

func (op *aggOp) markDirty(g *aggGroup) {
	if !g.dirty {
		g.dirty = true
		op.dirty = append(op.dirty, g)
	}
}

// output is the group's result row, or nil when the group is empty.
func (op *aggOp) output(g *aggGroup) types.Row {
	if g.rows <= 0 && len(op.groupBy) > 0 {
		return nil
	}
	out := make(types.Row, 0, len(g.key)+len(g.accs))
	out = append(out, g.key...)
	for _, a := range g.accs {
		out = append(out, a.Result())
	}
	return out
}

func (op *aggOp) Barrier(e Epoch) error {
	out := &Chunk{}
	if op.reemit {
		op.reemit = false
		if err := op.reemitAll(out); err != nil {
			return err
		}
	}
	// In key order (vnode, then group key): Pebble's memtable takes
	// sorted inserts faster.
	slices.SortFunc(op.dirty, func(a, b *aggGroup) int {
		if a.vn != b.vn {
			return int(a.vn) - int(b.vn)
		}
		return strings.Compare(a.ks, b.ks)
	})
	for _, g := range op.dirty {
		g.dirty = false
		cur := op.output(g)
		if err := op.emitChange(g, cur, out); err != nil {
			return err
		}
		op.stateKey = op.groupKey(op.stateKey[:0], g.ks)
		g.written = e.ID
		if cur == nil {
			if !op.lazy {
				delete(op.groups, g.ks)
			} // else: cached empty until the deletion commits
			if err := e.Batch.Delete(op.stateKey, nil); err != nil {
				return err
			}
			continue
		}
		op.stateVal = op.stateVal[:0]
		if op.keyInState {
			op.stateVal = keyenc.AppendRowValue(op.stateVal, g.key)
		}
		op.stateVal = g.marshal(op.stateVal)
		if err := e.Batch.Set(op.stateKey, op.stateVal, nil); err != nil {
			return err
		}
	}
	clear(op.dirty)
	op.dirty = op.dirty[:0]
	if op.extrema != nil {
		if err := op.extrema.flush(e.Batch, e.ID); err != nil {
			return err
		}
	}
	if err := op.freeClosed(e); err != nil {
		return err
	}
	op.evict()
	if out.Len() > 0 {
		if err := op.next.Push(out); err != nil {
			return err
		}
	}
	return op.next.Barrier(e)
}

// emitChange appends to out the change of g's output row from the one it
// emitted last to cur (nil: none), a delete and an insert, unless the two
// are equal, and remembers cur.
func (op *aggOp) emitChange(g *aggGroup, cur types.Row, out *Chunk) error {
	if cur != nil {
		op.encBuf = keyenc.AppendRowValue(op.encBuf[:0], cur)
		if g.emitted && bytes.Equal(op.encBuf, g.prev) {
			return nil
		}
	}
	var old types.Row
	if g.emitted {
		var err error
		if old, _, err = keyenc.DecodeRow(g.prev, len(op.groupBy)+len(op.calls)); err != nil {
			return fmt.Errorf("aggregate output: %w", err)
		}
	}
	if rowsEqual(old, cur) {
		return nil // equal values written differently (1.5, 1.50): no change
	}
	if old != nil {
		out.Append(old, Delete)
	}
	g.prev, g.emitted = g.prev[:0], cur != nil
	if cur != nil {
		out.Append(cur, Insert)
		g.prev = append(g.prev, op.encBuf...)
	}
	return nil
}

// closeWindowsBy makes the aggregate free the state of groups whose window
// c reports closed (their output rows stay downstream).
func (op *aggOp) closeWindowsBy(c *windowCloser) error {
	if op.lazy {
		// Freeing closed windows needs every open group indexed.
		if err := op.loadAll(); err != nil {
			return err
		}
		op.lazy = false
	}
	op.closer = c
	op.byEnd = map[int64][]string{}
	for k, g := range op.groups {
		op.trackEnd(k, g)
	}
	return nil
}

// evict bounds the group cache (see evictCommitted).
func (op *aggOp) evict() {
	if op.lazy {
		evictCommitted(op.limit, op.groups, func(g *aggGroup) uint64 { return g.written }, &op.miss)
	}
}

func (op *aggOp) trackEnd(k string, g *aggGroup) {
	if op.closer == nil {
		return
	}
	if end, ok := op.closer.end(g.key); ok {
		op.byEnd[end] = append(op.byEnd[end], k)
	}
}

// freeClosed drops groups of windows that ended at or before the
// watermark, from memory and from the state table. Called after the
// epoch's output is computed, so no group is freed before its last change
// is emitted; late rows never reach a freed window because the watermark
// filter drops them.
func (op *aggOp) freeClosed(e Epoch) error {
	if op.closer == nil {
		return nil
	}
	wm, ok := op.closer.closedBefore()
	if !ok {
		return nil
	}
	for end, keys := range op.byEnd {
		if end > wm {
			continue
		}
		for _, k := range keys {
			if _, live := op.groups[k]; !live {
				continue
			}
			delete(op.groups, k)
			if err := e.Batch.Delete(op.groupKey(nil, k), nil); err != nil {
				return err
			}
			if op.extrema != nil {
				if err := op.extrema.dropGroup(e.Batch, k, len(op.calls)); err != nil {
					return err
				}
			}
		}
		delete(op.byEnd, end)
	}
	return nil
}

func (g *aggGroup) marshal(buf []byte) []byte {
	buf = binary.AppendVarint(buf, g.rows)
	for _, a := range g.accs {
		buf = a.Marshal(buf)
	}
	return buf
}

func (g *aggGroup) unmarshal(b []byte) error {
	b, err := readVarint(b, &g.rows)
	if err != nil {
		return err
	}
	for _, a := range g.accs {
		if b, err = a.Unmarshal(b); err != nil {
			return err
		}
	}
	return nil
}

func rowsEqual(a, b types.Row) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].K != b[i].K || types.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// groupKey appends to buf the state key of the group whose key encodes
// to ks.
func (op *aggOp) groupKey(buf []byte, ks string) []byte {
	return appendVNodeKey(buf, op.prefix, op.vnodes, ks)
}
