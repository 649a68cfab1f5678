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
type Chunk struct {
	Rows  []types.Row
	Signs []int8
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
