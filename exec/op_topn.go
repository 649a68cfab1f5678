package exec

import (
	"encoding/binary"
	"fmt"

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
// State: prefix + keyenc.AppendRowValue(row) -> varint multiplicity, one
// key per distinct input row kept. What was emitted is not stored: it is a
// function of the rows, recomputed when the state is loaded.
type topNOp struct {
	t          *plan.TopN
	appendOnly bool // the input never retracts: prune rows past the bound
	inWidth    int
	prefix     []byte
	parts      map[string]*topNPartition
	dirty      map[string]*topNPartition
	changed    map[string]*rankEntry // row encoding -> entry whose count changed this epoch
	next       Operator
	errs       *viewErrors
	// closer, when set, frees partitions of closed windows; byEnd
	// indexes open partitions by their window's end (op_topn_window.go).
	closer *windowCloser
	byEnd  map[int64][]string
}

type topNPartition struct {
	rows rankList
	prev []types.Row // rows emitted so far
}

func newTopNOp(t *plan.TopN, appendOnly bool, prefix []byte, store storage.Reader, next Operator) (*topNOp, error) {
	op := &topNOp{
		t: t, appendOnly: appendOnly && t.Count >= 0, inWidth: len(t.Input.Schema()), prefix: prefix,
		parts: map[string]*topNPartition{}, dirty: map[string]*topNPartition{},
		changed: map[string]*rankEntry{}, next: next,
	}
	err := storage.ScanPrefix(store, prefix, func(k, v []byte) error {
		row, _, err := keyenc.DecodeRow(k[len(prefix):], op.inWidth)
		if err != nil {
			return fmt.Errorf("top-n state: %w", err)
		}
		var n int64
		if _, err := readVarint(v, &n); err != nil {
			return fmt.Errorf("top-n state: %w", err)
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
	pk, err := partitionKey(op.t, row)
	if err != nil {
		return "", nil, nil, err
	}
	e, err := newRankEntry(op.t.Order, row)
	if err != nil {
		return "", nil, nil, err
	}
	p, ok := op.parts[pk]
	if !ok {
		p = &topNPartition{}
		op.parts[pk] = p
		op.trackEnd(pk, row)
	}
	e = p.rows.add(op.t.Order, e, n)
	return pk, p, e, nil
}

func (op *topNOp) Push(c *Chunk) error {
	for i, row := range c.Rows {
		pk, p, ent, err := op.apply(row, int64(c.Signs[i]))
		if err != nil {
			// apply evaluates the row's partition and sort keys before
			// it changes anything, so a row that fails leaves no trace.
			if err := op.errs.skip("top-n", err); err != nil {
				return err
			}
			continue
		}
		op.dirty[pk] = p
		op.changed[ent.enc] = ent
		// Prune in bulk, not per row: a backfill epoch can bring many
		// rows to one partition.
		if op.appendOnly && int64(p.rows.Len()) > 2*(op.t.Offset+op.t.Count)+64 {
			op.prune(p)
		}
	}
	return nil
}

// prune drops the rows of p that rank past the bound (append-only input
// only), recording their state keys for deletion.
func (op *topNOp) prune(p *topNPartition) {
	for _, e := range p.rows.truncate(keptEntries(op.t, &p.rows)) {
		e.count = 0
		op.changed[e.enc] = e
	}
}

func (op *topNOp) Barrier(e Epoch) error {
	dels, ins := &Chunk{}, &Chunk{}
	for pk, p := range op.dirty {
		if op.appendOnly {
			op.prune(p)
		}
		cur := rankedRows(op.t, &p.rows)
		diffRows(p.prev, cur, dels, ins)
		p.prev = cur
		if p.rows.Len() == 0 {
			delete(op.parts, pk)
		}
	}
	clear(op.dirty)
	for enc, ent := range op.changed {
		key := append(append([]byte(nil), op.prefix...), enc...)
		var err error
		if ent.count == 0 {
			err = e.Batch.Delete(key, nil)
		} else {
			err = e.Batch.Set(key, binary.AppendVarint(nil, ent.count), nil)
		}
		if err != nil {
			return err
		}
	}
	clear(op.changed)
	if err := op.freeClosed(e); err != nil {
		return err
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
