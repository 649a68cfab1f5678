package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name         string
		live, budget int64
		want         int
	}{
		{"no budget", 100 * mib, 0, maxPercent},
		{"twice the live heap fits", 100 * mib, 512 * mib, maxPercent},
		{"exactly twice", 100 * mib, 200 * mib, maxPercent},
		{"the budget is the headroom", 100 * mib, 150 * mib, 150},
		{"budget as large as the live heap", 100 * mib, 100 * mib, minPercent},
		{"budget below the live heap", 100 * mib, 24 * mib, minPercent},
		{"nothing live yet", 0, 24 * mib, maxPercent},
	} {
		if got := Percent(c.live, c.budget); got != c.want {
			t.Errorf("%s: Percent(%d, %d) = %d, want %d", c.name, c.live, c.budget, got, c.want)
		}
	}
}

// gcPercent reads the collector's current percentage.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// collectUntil runs collections until the percentage is want (the pacer
// adjusts it just after a collection, on the cleanup goroutine).
func collectUntil(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != want {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d, want %d", gcPercent(), want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestStartLeavesOperatorGOGC: with GOGC set, Start changes nothing.
func TestStartLeavesOperatorGOGC(t *testing.T) {
	t.Setenv("GOGC", "77")
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	Start()
	if p := gcPercent(); p != 77 {
		t.Fatalf("GC percent %d after Start with GOGC=77, want 77", p)
	}
}

// TestHeadroomFollowsBudget: with a live heap larger than the budget the
// collector runs at minPercent, and back at maxPercent once the budget
// has room for twice the live heap, each after the next collection.
func TestHeadroomFollowsBudget(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the pacer leaves the collector alone")
	}
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	defer SetBudget(0)
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = byte(i)
	}
	SetBudget(1 << 20)
	Start()
	collectUntil(t, minPercent)
	SetBudget(1 << 40)
	collectUntil(t, maxPercent)
	runtime.KeepAlive(live)
}
