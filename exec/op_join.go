package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// joinOp is a streaming equi-join with retractions (a symmetric hash
// join). Each side keeps its rows by join key with their multiplicity and,
// for outer sides, how many rows of the other side they match, so that a
// change on either side emits exactly the result rows it adds or removes:
// joined rows, and NULL-padded rows that appear or vanish when a row's
// match count moves between zero and non-zero.
type joinOp struct {
	kind   plan.JoinKind
	keys   [2][]expr.Expr
	cond   expr.Expr
	widths [2]int
	outer  [2]bool
	state  [2]map[string]*joinBucket // join key -> its rows on that side
	dirty  []*joinEntry              // entries changed this epoch, in order
	prefix []byte
	next   Operator
	// barriers counts the inputs that delivered the current barrier.
	barriers int
	// rowInKeyOnly: the state's values hold only counts (see newJoinOp).
	rowInKeyOnly bool

	// Scratch reused across rows: the join key, a row's encoding.
	keyBuf, rowBuf []byte
	// Barrier scratch: the dirty entries' state keys (after the prefix)
	// one after another, where each starts, their order, a value.
	dirtyKeys []byte
	starts    []int
	order     []int
	valOut    []byte
}

type joinEntry struct {
	side   byte
	key    string
	rowKey string // the row's encoding (keyenc.AppendRowValue)
	// row is the decoded row, made on first use (see rowOf).
	row     types.Row
	count   int64 // multiplicity
	matches int64 // rows of the other side it matches (outer sides)
	dirty   bool  // in op.dirty for the current epoch
}

// newJoinOp restores the join's state from store. rowInKeyOnly selects
// the state format: each row stored once, as the key's suffix (the value
// holds its counts), or (older views) in the value too.
func newJoinOp(j *plan.Join, prefix []byte, store storage.Reader, rowInKeyOnly bool, next Operator) (*joinOp, error) {
	op := &joinOp{
		rowInKeyOnly: rowInKeyOnly,
		kind:         j.Kind, keys: [2][]expr.Expr{j.LeftKeys, j.RightKeys}, cond: j.Cond,
		widths: [2]int{len(j.Left.Schema()), len(j.Right.Schema())},
		outer:  [2]bool{j.Kind == plan.LeftJoin || j.Kind == plan.FullJoin, j.Kind == plan.RightJoin || j.Kind == plan.FullJoin},
		state:  [2]map[string]*joinBucket{{}, {}},
		prefix: prefix, next: next,
	}
	err := storage.ScanPrefix(store, prefix, func(k, v []byte) error {
		rest := k[len(prefix):]
		if len(rest) < 1 {
			return fmt.Errorf("join state: short key")
		}
		side := rest[0]
		kl, n := binary.Uvarint(rest[1:])
		if n <= 0 || int(kl) > len(rest)-1-n {
			return fmt.Errorf("join state: bad key")
		}
		b := op.bucket(side, rest[1+n:1+n+int(kl)])
		e := &joinEntry{side: side, key: b.key, rowKey: string(rest[1+n+int(kl):])}
		var err error
		if v, err = readVarint(v, &e.count); err != nil {
			return err
		}
		if v, err = readVarint(v, &e.matches); err != nil {
			return err
		}
		// The row is the key's suffix (in older views the value holds it
		// too): it is decoded when it first matches (rowOf).
		b.put(e)
		return nil
	})
	return op, err
}

// bucket returns side's bucket for join key, made if there is none.
func (op *joinOp) bucket(side byte, key []byte) *joinBucket {
	b := op.state[side][string(key)]
	if b == nil {
		b = &joinBucket{key: string(key)}
		op.state[side][b.key] = b
	}
	return b
}

// joinBucket holds one side's rows with one join key, by row encoding.
// Most keys have a single distinct row on a side (a bid's price, an
// auction's id), so the first row stays inline and a map is made only
// for a second one.
type joinBucket struct {
	key  string
	one  *joinEntry            // nil when empty or removed
	more map[string]*joinEntry // the others
}

// get returns the entry of the row encoded as rowKey, or nil.
func (b *joinBucket) get(rowKey []byte) *joinEntry {
	if b.one != nil && b.one.rowKey == string(rowKey) {
		return b.one
	}
	return b.more[string(rowKey)]
}

// put adds e, whose row the bucket does not hold.
func (b *joinBucket) put(e *joinEntry) {
	if b.one == nil {
		b.one = e
		return
	}
	if b.more == nil {
		b.more = map[string]*joinEntry{}
	}
	b.more[e.rowKey] = e
}

func (b *joinBucket) remove(e *joinEntry) {
	if b.one == e {
		b.one = nil
		return
	}
	delete(b.more, e.rowKey)
}

func (b *joinBucket) empty() bool { return b.one == nil && len(b.more) == 0 }

// all yields the bucket's entries; a nil bucket has none.
func (b *joinBucket) all(yield func(*joinEntry) bool) {
	if b == nil {
		return
	}
	if b.one != nil && !yield(b.one) {
		return
	}
	for _, e := range b.more {
		if !yield(e) {
			return
		}
	}
}

// port returns the Operator that feeds side (0 left, 1 right).
func (op *joinOp) port(side byte) Operator { return &joinPort{op: op, side: side} }

type joinPort struct {
	op   *joinOp
	side byte
}

func (p *joinPort) Push(c *Chunk) error {
	out := &Chunk{}
	for i, row := range c.Rows {
		if err := p.op.apply(p.side, row, int64(c.Signs[i]), out); err != nil {
			return err
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return p.op.next.Push(out)
}

func (p *joinPort) Barrier(e Epoch) error { return p.op.barrier(e) }

// joined builds the output row from a row of side and a row of the other.
func (op *joinOp) joined(side byte, row, other types.Row) types.Row {
	if side == 0 {
		return concatRows(row, other)
	}
	return concatRows(other, row)
}

// padded builds the NULL-extended output row of a row of side.
func (op *joinOp) padded(side byte, row types.Row) types.Row {
	return op.joined(side, row, nullRow(op.widths[1-side]))
}

func emitN(out *Chunk, row types.Row, sign int8, n int64) {
	for range n {
		out.Append(row, sign)
	}
}

// apply processes one change (sign +1 or -1) of one row on side.
//
// It allocates only what it keeps: output rows come from out's slab (a
// candidate that fails the residual condition gives its datums back), and
// map keys are built in scratch buffers and copied only for new entries.
func (op *joinOp) apply(side byte, row types.Row, sign int64, out *Chunk) error {
	kb, ok, err := joinKey(op.keys[side], row, op.keyBuf)
	op.keyBuf = kb
	if err != nil {
		return err
	}
	if !ok {
		// A NULL key matches nothing: outer sides pass it padded.
		if op.outer[side] {
			out.Append(op.padded(side, row), int8(sign))
		}
		return nil
	}
	other := 1 - side
	var matches int64
	for e := range op.state[other][string(kb)].all {
		erow, err := op.rowOf(e)
		if err != nil {
			return err
		}
		j := out.newRow(len(row) + len(erow))
		if side == 0 {
			copy(j[copy(j, row):], erow)
		} else {
			copy(j[copy(j, erow):], row)
		}
		pass, err := joinMatches(op.cond, j)
		if err != nil {
			return err
		}
		if !pass {
			continue // j's datums are handed out again by the next newRow
		}
		matches += e.count
		if !op.outer[other] {
			out.keepRow(j, int8(sign))
			emitN(out, j, int8(sign), e.count-1)
			continue
		}
		// The padded row leaves before the first match and comes back
		// after the last one (in this order: a keyed view may key both
		// rows alike). padded allocates its own row, so j stays intact.
		before := e.matches
		e.matches += sign
		if before == 0 && e.matches > 0 {
			emitN(out, op.padded(other, erow), Delete, e.count)
		}
		op.markDirty(e)
		out.keepRow(j, int8(sign))
		emitN(out, j, int8(sign), e.count-1)
		if before > 0 && e.matches == 0 {
			emitN(out, op.padded(other, erow), Insert, e.count)
		}
	}
	if op.outer[side] && matches == 0 {
		out.Append(op.padded(side, row), int8(sign))
	}
	op.rowBuf = keyenc.AppendRowValue(op.rowBuf[:0], row)
	b := op.bucket(side, kb)
	e := b.get(op.rowBuf)
	if e == nil {
		// Only the encoding is kept: most rows never match (rowOf).
		e = &joinEntry{side: side, key: b.key, rowKey: string(op.rowBuf)}
		b.put(e)
	}
	e.count += sign
	e.matches = matches
	op.markDirty(e)
	if e.count <= 0 {
		b.remove(e)
		if b.empty() {
			delete(op.state[side], b.key)
		}
	}
	return nil
}

// rowOf returns e's row, decoded from its encoding on first use and kept.
// Most rows of a join never match (a bid joined with its window's highest
// price), so keeping them only encoded saves their datums: memory, and
// pointers the collector would scan.
func (op *joinOp) rowOf(e *joinEntry) (types.Row, error) {
	if e.row == nil && op.widths[e.side] > 0 {
		r, _, err := keyenc.DecodeRow([]byte(e.rowKey), op.widths[e.side])
		if err != nil {
			return nil, fmt.Errorf("join state: %w", err)
		}
		e.row = r
	}
	return e.row, nil
}

// appendStateKeySuffix appends e's state key after the operator's prefix.
func (op *joinOp) appendStateKeySuffix(k []byte, e *joinEntry) []byte {
	k = append(k, e.side)
	k = binary.AppendUvarint(k, uint64(len(e.key)))
	k = append(k, e.key...)
	return append(k, e.rowKey...)
}

// markDirty records e for the epoch's write, once per entry. An entry
// deleted and made again in one epoch is two entries with one state key:
// the barrier writes them in the order they were marked, so the newest
// version wins.
func (op *joinOp) markDirty(e *joinEntry) {
	if e.dirty {
		return
	}
	e.dirty = true
	op.dirty = append(op.dirty, e)
}

func (op *joinOp) barrier(ep Epoch) error {
	op.barriers++
	if op.barriers < 2 {
		return nil
	}
	op.barriers = 0
	// In key order: Pebble's memtable takes sorted inserts faster. Keys
	// are built once into one buffer (a stable sort keeps an entry made
	// again after its deletion last); Batch.Set copies keys and values.
	op.dirtyKeys, op.starts, op.order = op.dirtyKeys[:0], op.starts[:0], op.order[:0]
	for i, e := range op.dirty {
		op.starts = append(op.starts, len(op.dirtyKeys))
		op.dirtyKeys = append(op.dirtyKeys, op.prefix...)
		op.dirtyKeys = op.appendStateKeySuffix(op.dirtyKeys, e)
		op.order = append(op.order, i)
	}
	op.starts = append(op.starts, len(op.dirtyKeys))
	key := func(i int) []byte { return op.dirtyKeys[op.starts[i]:op.starts[i+1]] }
	slices.SortStableFunc(op.order, func(a, b int) int { return bytes.Compare(key(a), key(b)) })
	for _, i := range op.order {
		e := op.dirty[i]
		e.dirty = false
		if e.count <= 0 {
			if err := ep.Batch.Delete(key(i), nil); err != nil {
				return err
			}
			continue
		}
		v := binary.AppendVarint(op.valOut[:0], e.count)
		v = binary.AppendVarint(v, e.matches)
		if !op.rowInKeyOnly {
			v = append(v, e.rowKey...) // the row's encoding
		}
		op.valOut = v
		if err := ep.Batch.Set(key(i), v, nil); err != nil {
			return err
		}
	}
	clear(op.dirty) // drop the pointers: deleted entries may go
	op.dirty = op.dirty[:0]
	return op.next.Barrier(ep)
}
