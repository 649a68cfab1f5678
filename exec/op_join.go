package exec

import (
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
	state  [2]map[string]map[string]*joinEntry // join key -> row encoding -> entry
	dirty  map[string]*joinEntry               // state key suffix -> entry
	prefix []byte
	next   Operator
	// barriers counts the inputs that delivered the current barrier.
	barriers int
	// rowInKeyOnly: the state's values hold only counts (see newJoinOp).
	rowInKeyOnly bool

	// Scratch reused across rows: the join key, a row's encoding, a
	// dirty-map key.
	keyBuf, rowBuf, dirtyBuf []byte
	// Barrier scratch: the dirty keys in order, a state key and value.
	sorted         []string
	keyOut, valOut []byte
}

type joinEntry struct {
	side    byte
	key     string
	rowKey  string
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
		state:  [2]map[string]map[string]*joinEntry{{}, {}},
		dirty:  map[string]*joinEntry{}, prefix: prefix, next: next,
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
		jk := string(rest[1+n : 1+n+int(kl)])
		rowKey := string(rest[1+n+int(kl):])
		e := &joinEntry{side: side, key: jk, rowKey: rowKey}
		var err error
		if v, err = readVarint(v, &e.count); err != nil {
			return err
		}
		if v, err = readVarint(v, &e.matches); err != nil {
			return err
		}
		if op.rowInKeyOnly {
			v = rest[1+n+int(kl):] // the row key is the row's encoding
		}
		if e.row, _, err = keyenc.DecodeRow(v, op.widths[side]); err != nil {
			return err
		}
		op.bucket(side, jk, true)[rowKey] = e
		return nil
	})
	return op, err
}

func (op *joinOp) bucket(side byte, key string, create bool) map[string]*joinEntry {
	b := op.state[side][key]
	if b == nil && create {
		b = map[string]*joinEntry{}
		op.state[side][key] = b
	}
	return b
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
	for _, e := range op.state[other][string(kb)] {
		j := out.newRow(len(row) + len(e.row))
		if side == 0 {
			copy(j[copy(j, row):], e.row)
		} else {
			copy(j[copy(j, e.row):], row)
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
			emitN(out, op.padded(other, e.row), Delete, e.count)
		}
		op.markDirty(e)
		out.keepRow(j, int8(sign))
		emitN(out, j, int8(sign), e.count-1)
		if before > 0 && e.matches == 0 {
			emitN(out, op.padded(other, e.row), Insert, e.count)
		}
	}
	if op.outer[side] && matches == 0 {
		out.Append(op.padded(side, row), int8(sign))
	}
	op.rowBuf = keyenc.AppendRowValue(op.rowBuf[:0], row)
	b := op.state[side][string(kb)]
	e := b[string(op.rowBuf)]
	if e == nil {
		if b == nil {
			b = op.bucket(side, string(kb), true)
		}
		// A copy: chunk rows share slabs, and a kept row would pin its
		// whole slab for as long as it stays in the join's state.
		rowKey := string(op.rowBuf)
		e = &joinEntry{side: side, key: string(kb), rowKey: rowKey, row: append(types.Row(nil), row...)}
		b[rowKey] = e
	}
	e.count += sign
	e.matches = matches
	op.markDirty(e)
	if e.count <= 0 {
		delete(b, e.rowKey)
		if len(b) == 0 {
			delete(op.state[side], e.key)
		}
	}
	return nil
}

// appendStateKeySuffix appends e's state key after the operator's prefix.
func (op *joinOp) appendStateKeySuffix(k []byte, e *joinEntry) []byte {
	k = append(k, e.side)
	k = binary.AppendUvarint(k, uint64(len(e.key)))
	k = append(k, e.key...)
	return append(k, e.rowKey...)
}

// markDirty records e for the epoch's write, once per entry: keyed by the
// state key, so that an entry deleted and made again in one epoch is
// written as its newest version.
func (op *joinOp) markDirty(e *joinEntry) {
	if e.dirty {
		return
	}
	e.dirty = true
	op.dirtyBuf = op.appendStateKeySuffix(op.dirtyBuf[:0], e)
	op.dirty[string(op.dirtyBuf)] = e
}

func (op *joinOp) barrier(ep Epoch) error {
	op.barriers++
	if op.barriers < 2 {
		return nil
	}
	op.barriers = 0
	// In key order: Pebble's memtable takes sorted inserts faster. Keys
	// and values go through reused buffers (Batch.Set copies them).
	op.sorted = op.sorted[:0]
	for suffix := range op.dirty {
		op.sorted = append(op.sorted, suffix)
	}
	slices.Sort(op.sorted)
	for _, suffix := range op.sorted {
		e := op.dirty[suffix]
		e.dirty = false
		op.keyOut = append(append(op.keyOut[:0], op.prefix...), suffix...)
		if e.count <= 0 {
			if err := ep.Batch.Delete(op.keyOut, nil); err != nil {
				return err
			}
			continue
		}
		v := binary.AppendVarint(op.valOut[:0], e.count)
		v = binary.AppendVarint(v, e.matches)
		if !op.rowInKeyOnly {
			v = keyenc.AppendRowValue(v, e.row)
		}
		op.valOut = v
		if err := ep.Batch.Set(op.keyOut, v, nil); err != nil {
			return err
		}
	}
	clear(op.dirty)
	return op.next.Barrier(ep)
}
