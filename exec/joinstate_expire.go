package exec

import (
	"streamdb/plan"
	"streamdb/types"
)

// joinExpiry frees join rows that can match no row to come.
type joinExpiry struct{}

func findJoinExpiry(n *plan.Join, state func(*plan.Scan) *watermarkState) *joinExpiry { return nil }

func (x *joinExpiry) track(op *joinOp, e *joinEntry, row types.Row) {}

func (c *joinCache) freeClosed(op *joinOp) {}
