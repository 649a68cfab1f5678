package exec

import (
	"context"
	"sync/atomic"
	"testing"

	"streamdb/gcpace"
)

// TestMemoryBudgetPacesCollector: the garbage collector's headroom follows
// state.memory.budget as set on the runtime.
func TestMemoryBudgetPacesCollector(t *testing.T) {
	rt := &Runtime{}
	defer rt.SetMemoryBudget(0)
	rt.SetMemoryBudget(96 << 20)
	if got := gcpace.Budget(); got != 96<<20 {
		t.Fatalf("gcpace.Budget() = %d after SetMemoryBudget(96 MiB)", got)
	}
}

func TestWaterLevel(t *testing.T) {
	for _, c := range []struct {
		name    string
		budget  int64
		demands []int64
		want    int64
	}{
		{"no caches", 1000, nil, 1000},
		{"equal hungry caches split evenly", 1000, []int64{5000, 5000, 5000, 5000}, 250},
		{"small demands met, the large split the rest", 1000, []int64{10, 5000, 30, 5000}, 480},
		{"a demand just over the share joins the large", 1000, []int64{400, 5000, 5000}, 333},
		{"every demand met: the largest may grow into what is left", 1000, []int64{100, 200, 300}, 700},
		{"one cache", 1000, []int64{5000}, 1000},
	} {
		if got := waterLevel(c.budget, c.demands); got != c.want {
			t.Errorf("%s: waterLevel(%d, %v) = %d, want %d", c.name, c.budget, c.demands, got, c.want)
		}
	}
}

// TestBudgetFollowsWhatCachesHold: caches that hold little leave the
// budget to those that had to evict, and a cache that fills its limit
// asks for more again; one that stops evicting is content again after a
// while.
func TestBudgetFollowsWhatCachesHold(t *testing.T) {
	var setting atomic.Int64
	setting.Store(1_000_000)
	m := &memoryBudget{settings: map[cacheKind]*atomic.Int64{groupCacheKind: &setting}}
	const per = 320 // groupCacheKind's bytes per entry
	m.bytes.Store(8 * 1000 * per)
	var slots []*cacheSlot
	for range 8 {
		slots = append(slots, &cacheSlot{budget: m, kind: groupCacheKind, setting: &setting})
	}
	m.slots = slots
	limits := func() (out []int64) {
		for _, s := range slots {
			out = append(out, s.max())
		}
		return out
	}
	m.rebalance()
	if got := limits(); got[0] != 8000 || got[7] != 8000 {
		t.Fatalf("new caches get %v entries, want the whole budget (8000) until one has to evict", got)
	}
	for _, s := range slots {
		s.report(1001)
	}
	m.rebalance()
	if got := limits(); got[0] != 1000 || got[7] != 1000 {
		t.Fatalf("caches that all outgrew their limit get %v entries, want an equal 1000 each", got)
	}
	// Six caches settle at 10 entries each; two keep outgrowing their
	// limit.
	for range wantRounds + 1 {
		for i, s := range slots {
			s.report(10)
			if i < 2 {
				s.report(s.max() + 1)
			}
		}
		m.rebalance()
	}
	if got, want := limits(), int64((8*1000-60)/2); got[0] != want || got[1] != want || got[2] != want {
		t.Fatalf("limits %v; want %d for the two full caches (the budget less the small ones' 60 entries, halved)", got, want)
	}
	// A small cache outgrows its limit too: the level falls to what
	// three caches share.
	slots[2].report(slots[2].limit.Load() + 1)
	m.rebalance()
	if got, want := limits(), int64((8*1000-50)/3); got[0] != want || got[2] != want {
		t.Fatalf("limits %v; want %d each once a third cache is full", got, want)
	}
	// The third cache stops growing at 100 entries while the first two
	// keep outgrowing theirs: after wantRounds rebalances it is content
	// with its 100.
	for range wantRounds + 1 {
		for _, s := range slots[:2] {
			s.report(s.max() + 1)
		}
		slots[2].report(100)
		m.rebalance()
	}
	if got, want := limits(), int64((8*1000-150)/2); got[0] != want {
		t.Fatalf("limits %v; want %d once the third cache has held 100 entries for a while", got, want)
	}
	// A join's two sides count twice.
	if got, want := joinCacheKind.limit(setting.Load(), m.level.Load()), m.level.Load()/(2*joinCacheKind.bytes); got != want {
		t.Fatalf("a join gets %d entries per side at level %d, want %d", got, m.level.Load(), want)
	}
}

// TestMemoryPoolSharedByQueries: two queries' rows count against one pool,
// each against its own limit too, and a query's rows leave the pool when
// it ends.
func TestMemoryPoolSharedByQueries(t *testing.T) {
	var pool MemoryPool
	pool.SetLimit(100 * rowBytes(1))
	ctx1, release1 := WithMemoryLimit(context.Background(), 0, &pool)
	ctx2, release2 := WithMemoryLimit(context.Background(), 0, &pool)
	if err := charge(ctx1, 60, 1); err != nil {
		t.Fatalf("first query within the pool: %v", err)
	}
	if err := charge(ctx2, 60, 1); err == nil {
		t.Fatal("second query passed the pool the first one half fills")
	}
	release2()
	release1()
	if used := pool.Used(); used != 0 {
		t.Fatalf("pool holds %d bytes after both queries ended", used)
	}
	ctx3, release3 := WithMemoryLimit(context.Background(), 10*rowBytes(1), &pool)
	defer release3()
	if err := charge(ctx3, 50, 1); err == nil {
		t.Fatal("a query passed its own limit inside the pool's")
	}
}
