package exec

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"streamdb/sqlerr"
	"streamdb/types"
)

// An ad-hoc query holds its intermediate rows in memory (RunBatch). A
// budget in its context bounds how much it may build, so that one query
// (a join that explodes, say) is refused with 53200 instead of taking the
// server's memory; the same checks notice cancellation, so a long join
// stops when the client cancels.

type budgetKey struct{}

// budget counts the bytes of rows a query has built, against its own
// limit and the pool all running queries share.
type budget struct {
	limit int64
	used  atomic.Int64
	pool  *MemoryPool
}

// MemoryPool bounds the rows that all ad-hoc queries running at once
// build together (query.max-memory-total): a per-session limit alone lets
// a few sessions take the server's memory. A query's rows count until it
// ends.
type MemoryPool struct {
	limit atomic.Int64 // 0: no bound
	used  atomic.Int64
}

// SetLimit sets the pool's bound in bytes (0 or less: none).
func (p *MemoryPool) SetLimit(limit int64) { p.limit.Store(max(limit, 0)) }

// Used is the bytes the running queries have built.
func (p *MemoryPool) Used() int64 { return p.used.Load() }

// WithMemoryLimit returns ctx carrying a memory budget of limit bytes for
// a batch query (0 or less: unlimited) that also draws on pool (nil: none),
// and the function that gives its bytes back to the pool when the query
// ends.
func WithMemoryLimit(ctx context.Context, limit int64, pool *MemoryPool) (context.Context, func()) {
	if limit <= 0 && pool == nil {
		return ctx, func() {}
	}
	b := &budget{limit: limit, pool: pool}
	return context.WithValue(ctx, budgetKey{}, b), func() {
		if pool != nil {
			pool.used.Add(-b.used.Swap(0))
		}
	}
}

// rowBytes estimates the memory of one row of width columns: its datums,
// its slice header and the slot that holds it.
func rowBytes(width int) int64 {
	return int64(width)*int64(unsafe.Sizeof(types.Datum{})) + int64(unsafe.Sizeof(types.Row{})) + 8
}

// checkEvery is how many rows a loop builds or visits between checks.
const checkEvery = 1024

// charge accounts for rows new rows of width columns and fails once the
// query's budget is spent or its context is done.
func charge(ctx context.Context, rows, width int) error {
	if err := ctx.Err(); err != nil {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b == nil || rows == 0 {
		return nil
	}
	n := int64(rows) * rowBytes(width)
	if used := b.used.Add(n); b.limit > 0 && used > b.limit {
		return sqlerr.New(sqlerr.OutOfMemory, "out of memory: the query needs more than %s for its rows", formatBytes(b.limit)).
			WithHint("Add filters or join conditions, or raise query_max_memory for this session.")
	}
	if b.pool != nil {
		total := b.pool.used.Add(n)
		if limit := b.pool.limit.Load(); limit > 0 && total > limit {
			return sqlerr.New(sqlerr.OutOfMemory, "out of memory: the ad-hoc queries running now need more than query.max-memory-total (%s) for their rows together", formatBytes(limit)).
				WithHint("Retry when other queries have finished, add filters or join conditions, or raise query.max-memory-total.")
		}
	}
	return nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dkB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
