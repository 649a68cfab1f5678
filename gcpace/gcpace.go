// Package gcpace paces Go's garbage collector for the server: how far the
// heap may grow above its live part before the next collection (the
// headroom) follows state.memory.budget instead of a fixed GOGC.
//
// Go sizes the headroom as a percentage of the live heap (GOGC). The server
// prefers maxPercent: views keep pointer-rich working state on the heap,
// and at Go's default marking it takes a large share of a join's CPU. But a
// fixed percentage makes the process's memory a multiple of its live heap,
// and the live heap grows with a backlog beyond what the state caches keep
// within the budget: the embedded NATS server keeps the blocks of a stream
// it wrote or read in the last seconds in memory (8 MiB each), and epochs
// in flight carry their rows. At maxPercent each of those bytes takes three
// in the process.
//
// So the headroom is twice the live heap (maxPercent) only while that fits
// in the budget; past it, the headroom is the budget, and never less than
// the live heap itself (minPercent, Go's default), so that a live heap
// larger than the budget costs collections at Go's usual pace rather than
// a collector that never rests. Without a budget the percentage stays
// maxPercent. After every collection the percentage for the next is set
// from the live heap that collection found. Pebble's memory is C memory,
// outside the heap and outside this pacing.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

const (
	// maxPercent is the collector's percentage while twice the live
	// heap fits in the budget.
	maxPercent = 200
	// minPercent is the least the budget lowers it to: Go's default.
	minPercent = 100
)

// Percent returns the GOGC percentage for a live heap of live bytes under
// a budget of budget bytes (0 or less: none): the headroom is the budget,
// kept between one and two times the live heap.
func Percent(live, budget int64) int {
	if budget <= 0 || live <= 0 {
		return maxPercent
	}
	headroom := min(max(budget, live), 2*live)
	return int(headroom * 100 / live)
}

var pacer struct {
	budget  atomic.Int64
	once    sync.Once
	mu      sync.Mutex // serializes adjust
	percent int        // last set, under mu
}

// SetBudget sets the budget the headroom follows (state.memory.budget in
// bytes; 0: none). It takes effect at the next collection.
func SetBudget(n int64) { pacer.budget.Store(n) }

// Budget returns the budget the headroom follows.
func Budget() int64 { return pacer.budget.Load() }

// Start sets the collector's percentage to maxPercent and from then on
// adjusts it after every collection, unless the operator set GOGC, which
// then applies as Go applies it. Later calls do nothing.
func Start() {
	if os.Getenv("GOGC") != "" {
		return
	}
	pacer.once.Do(func() {
		pacer.mu.Lock()
		pacer.percent = maxPercent
		debug.SetGCPercent(maxPercent)
		pacer.mu.Unlock()
		watch()
	})
}

// watch calls adjust after the next collection, and so after every one:
// the sentinel is unreachable from the start, so the first collection
// that follows runs its cleanup, which watches again.
func watch() {
	s := &sentinel{}
	runtime.AddCleanup(s, func(struct{}) {
		adjust()
		watch()
	}, struct{}{})
}

// sentinel is a heap object of its own (with a pointer, so that the
// allocator does not pack it with other small objects, whose collection
// it would then wait for).
type sentinel struct{ _ *int }

// liveSample reads the live heap the last collection marked.
var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// adjust sets the percentage from the live heap the last collection found.
func adjust() {
	pacer.mu.Lock()
	defer pacer.mu.Unlock()
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := Percent(int64(liveSample[0].Value.Uint64()), pacer.budget.Load())
	if p != pacer.percent {
		pacer.percent = p
		debug.SetGCPercent(p)
	}
}
