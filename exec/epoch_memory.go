package exec

import (
	"sync/atomic"
	"unsafe"

	"streamdb/sqlerr"
)

// A view holds the changes of an epoch in memory until its barrier writes
// them to Pebble in one batch (materializeOp.pending). An input change that
// multiplies into millions of rows (a cross join's backfill, say) would take
// the server's memory before that barrier, so the bytes one view holds for
// an epoch are bounded (state.epoch.max-memory): past the bound the view
// stops with 53200, and a CREATE still backfilling it fails and leaves
// nothing. Tables' own pipelines are not bounded: their input is committed
// already, and a table must apply it whatever its size.

// epochMemoryLimit is the bound, shared by every view's materialize.
type epochMemoryLimit struct{ bytes atomic.Int64 }

// SetEpochMemoryLimit sets state.epoch.max-memory (0 or less: no bound).
func (rt *Runtime) SetEpochMemoryLimit(n int64) { rt.epochLimit.bytes.Store(max(n, 0)) }

// size estimates the heap the epoch's writes hold: the arena, the entries
// and the index.
func (p *pendingWrites) size() int64 {
	return int64(cap(p.arena)) + int64(cap(p.entries))*int64(unsafe.Sizeof(pendingEntry{})) + int64(len(p.index))*24
}

// checkEpochMemory fails once the epoch's writes pass the bound.
func (op *materializeOp) checkEpochMemory() error {
	if op.epochLimit == nil {
		return nil
	}
	limit := op.epochLimit.bytes.Load()
	if limit <= 0 {
		return nil
	}
	if used := op.pending.size(); used > limit {
		return sqlerr.New(sqlerr.OutOfMemory, "out of memory: materialized view %q needs more than state.epoch.max-memory (%s) for the changes of one epoch", op.view, formatBytes(limit)).
			WithHint("A join that multiplies rows (a cross join, or a condition most rows meet) holds every row one input change produces; add or tighten its join condition, or raise state.epoch.max-memory.")
	}
	return nil
}
