package exec

import (
	"encoding/binary"
	"fmt"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// aggOp is a streaming hash aggregation. It keeps every group in memory
// (loaded from its state table at start) and emits changes to its output
// only when a barrier passes: for each group touched in the epoch, a delete
// of the row it emitted before and an insert of the new one. Holding back
// to the barrier turns many updates of a hot group into one change.
type aggOp struct {
	groupBy    []expr.Expr
	calls      []plan.AggCall
	appendOnly bool
	prefix     []byte // state table: group key -> row count + accumulator states
	groups     map[string]*aggGroup
	dirty      map[string]*aggGroup
	next       Operator

	// closer, when set, frees groups whose window the watermark closed;
	// byEnd indexes open groups by their window's end.
	closer *windowCloser
	byEnd  map[int64][]string
}

type aggGroup struct {
	key  types.Row
	rows int64 // input rows in the group (weight sum)
	accs []Accumulator
	prev types.Row // output row last emitted, nil if none
}

func newAggOp(a *plan.Aggregate, appendOnly bool, prefix []byte, store storage.Reader, next Operator) (*aggOp, error) {
	op := &aggOp{
		groupBy: a.GroupBy, calls: a.Aggs, appendOnly: appendOnly, prefix: prefix,
		groups: map[string]*aggGroup{}, dirty: map[string]*aggGroup{}, next: next,
	}
	err := storage.ScanPrefix(store, prefix, func(k, v []byte) error {
		key, _, err := keyenc.DecodeRow(k[len(prefix):], len(a.GroupBy))
		if err != nil {
			return err
		}
		g := op.newGroup(key)
		if err := g.unmarshal(v); err != nil {
			return fmt.Errorf("aggregate state: %w", err)
		}
		g.prev = op.output(g)
		op.groups[string(k[len(prefix):])] = g
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(a.GroupBy) == 0 && len(op.groups) == 0 {
		// A global aggregate has one row even over no input (count 0).
		g := op.newGroup(types.Row{})
		op.groups[""] = g
		op.dirty[""] = g
	}
	return op, nil
}

func (op *aggOp) newGroup(key types.Row) *aggGroup {
	g := &aggGroup{key: key, accs: make([]Accumulator, len(op.calls))}
	for i, c := range op.calls {
		g.accs[i] = NewAccumulator(c, op.appendOnly)
	}
	return g
}

func (op *aggOp) Push(c *Chunk) error {
	var keyBuf []byte
	for i, row := range c.Rows {
		keyBuf = keyBuf[:0]
		var key types.Row
		if len(op.groupBy) > 0 {
			key = make(types.Row, len(op.groupBy))
			for j, e := range op.groupBy {
				v, err := e.Eval(row)
				if err != nil {
					return err
				}
				key[j] = v
				keyBuf = keyenc.Append(keyBuf, v)
			}
		}
		g, ok := op.groups[string(keyBuf)]
		if !ok {
			g = op.newGroup(key)
			op.groups[string(keyBuf)] = g
			op.trackEnd(string(keyBuf), g)
		}
		sign := int64(c.Signs[i])
		for j, call := range op.calls {
			v := types.Null
			if call.Arg != nil {
				var err error
				if v, err = call.Arg.Eval(row); err != nil {
					return err
				}
			}
			if err := g.accs[j].Add(v, sign); err != nil {
				return err
			}
		}
		g.rows += sign
		op.dirty[string(keyBuf)] = g
	}
	return nil
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
	for k, g := range op.dirty {
		cur := op.output(g)
		if !rowsEqual(g.prev, cur) {
			if g.prev != nil {
				out.Append(g.prev, Delete)
			}
			if cur != nil {
				out.Append(cur, Insert)
			}
			g.prev = cur
		}
		stateKey := append(append([]byte(nil), op.prefix...), k...)
		if cur == nil {
			delete(op.groups, k)
			if err := e.Batch.Delete(stateKey, nil); err != nil {
				return err
			}
			continue
		}
		if err := e.Batch.Set(stateKey, g.marshal(), nil); err != nil {
			return err
		}
	}
	clear(op.dirty)
	if err := op.freeClosed(e); err != nil {
		return err
	}
	if out.Len() > 0 {
		if err := op.next.Push(out); err != nil {
			return err
		}
	}
	return op.next.Barrier(e)
}

// closeWindowsBy makes the aggregate free the state of groups whose window
// c reports closed (their output rows stay downstream).
func (op *aggOp) closeWindowsBy(c *windowCloser) {
	op.closer = c
	op.byEnd = map[int64][]string{}
	for k, g := range op.groups {
		op.trackEnd(k, g)
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
			if err := e.Batch.Delete(append(append([]byte(nil), op.prefix...), k...), nil); err != nil {
				return err
			}
		}
		delete(op.byEnd, end)
	}
	return nil
}

func (g *aggGroup) marshal() []byte {
	buf := binary.AppendVarint(nil, g.rows)
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
