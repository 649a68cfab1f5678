// Package exec runs plans: as batch queries over stored state, and as
// streaming dataflows that keep materialized views current. Streaming data
// moves as chunks of rows, each row tagged insert or delete, with barriers
// in band that close epochs; see runtime.go for the wiring.
package exec

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/types"
)

// Sign tags a row of a chunk: +1 insert, -1 delete. An update is a delete
// of the old row followed by an insert of the new one.
const (
	Insert int8 = 1
	Delete int8 = -1
)

// Chunk is a batch of changes.
//
// Rows a source decodes share backing arrays (see newRow): an operator may
// keep a row of a chunk as long as it likes, but it must never write to
// one, and one that keeps only a few rows out of many should copy them, or
// it pins the whole array.
type Chunk struct {
	Rows  []types.Row
	Signs []int8
	// slab is unused datum storage that newRow hands out.
	slab []types.Datum
	// slabRows, if set, is how many rows one slab allocation holds
	// (default defaultSlabRows); base is the first slab, which recycle
	// hands out again, and carved counts the datums handed out since.
	slabRows int
	base     []types.Datum
	carved   int
}

// defaultSlabRows is how many rows of datums one slab allocation holds.
const defaultSlabRows = 256

// newRow returns a row of n NULL datums carved from the chunk's slab (one
// allocation per slabRows rows instead of one per row). It does not append
// the row: call keepRow after filling it, or the next newRow returns the
// same datums (cleared) again.
func (c *Chunk) newRow(n int) types.Row {
	if len(c.slab) < n {
		rows := c.slabRows
		if rows == 0 {
			rows = defaultSlabRows
		}
		c.slab = make([]types.Datum, n*rows)
		if c.base == nil {
			c.base = c.slab
		}
	}
	row := c.slab[:n:n]
	clear(row)
	return row
}

// keepRow appends row, which the latest newRow returned, with sign.
func (c *Chunk) keepRow(row types.Row, sign int8) {
	c.slab = c.slab[len(row):]
	c.carved += len(row)
	c.Append(row, sign)
}

// reset empties the chunk for reuse, keeping its slices' capacity; rows
// already handed out stay valid because the slab is never rewound.
func (c *Chunk) reset() {
	c.Rows = c.Rows[:0]
	c.Signs = c.Signs[:0]
}

// recycle empties c to be filled again from the start of its first slab,
// which it first grows to hold all the rows c held if they outgrew it.
// Only for a chunk whose rows nothing references any more: every operator
// that saw them only borrowed them (see borrowsRows).
func (c *Chunk) recycle() {
	if c.carved > len(c.base) {
		c.base = make([]types.Datum, max(2*len(c.base), c.carved))
	}
	c.reset()
	c.slab, c.carved = c.base, 0
}

// truncate drops the changes after the first n.
func (c *Chunk) truncate(n int) {
	c.Rows = c.Rows[:n]
	c.Signs = c.Signs[:n]
}

// Append adds one change.
func (c *Chunk) Append(row types.Row, sign int8) {
	c.Rows = append(c.Rows, row)
	c.Signs = append(c.Signs, sign)
}

// Len is the number of changes.
func (c *Chunk) Len() int { return len(c.Rows) }

// Epoch is what a barrier carries to each operator: the epoch it closes and
// the write batch that collects the pipeline's state changes for it.
type Epoch struct {
	ID    uint64
	Batch *pebble.Batch
}

// Operator is one streaming operator. A pipeline drives its operators from
// a single goroutine: no operator method is ever called concurrently.
type Operator interface {
	// Push processes a chunk of changes, pushing results downstream.
	Push(c *Chunk) error
	// Barrier closes the epoch: the operator emits what it held back,
	// writes its dirty state to e.Batch, then forwards the barrier.
	Barrier(e Epoch) error
}
