package bench

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

const orderedStateBench = "top-N and min/max state"

// orderedStateEvents is the distinct keys of the ordered-state bench at
// 1x state (4x publishes four times as many); BENCH_ORDERED_EVENTS
// overrides.
func orderedStateEvents(b *testing.B) int {
	n := 100_000
	if report.Mode == "full" {
		n = 300_000
	}
	if v := os.Getenv("BENCH_ORDERED_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("BENCH_ORDERED_EVENTS=%q: want a positive integer", v)
		}
	}
	return n
}

// BenchmarkOrderedState measures issue 18 item 3's memory figures: a
// top-N and a max over the output of a GROUP BY, an input that retracts
// (each key's count changes as its events arrive), so neither operator
// may prune its state to the bound and both hold a row per key. Over N
// and 4N distinct keys (each published twice), each on a fresh server,
// it reports each run's peak RSS and the ratio 4x/1x. Both run under a
// memory budget smaller than the 1x state (stateBudget), so the ratio
// shows growth past the budget.
func BenchmarkOrderedState(b *testing.B) {
	n := orderedStateEvents(b)
	budget := stateBudget(b, n)
	report.Configf("ordered state: top-10 and max(count) per key group over a GROUP BY of %d and %d distinct keys (each published twice; fresh server each, published while paused); state.memory.budget %d bytes (%.1f MiB), below the 1x state", n, 4*n, budget, float64(budget)/(1<<20))
	var peaks [2]float64
	for i, scale := range []int{1, 4} {
		b.Run(fmt.Sprintf("ordered/%dx", scale), func(b *testing.B) {
			peaks[i] = benchOrdered(b, scale, n*scale, budget)
		})
	}
	if peaks[0] > 0 && peaks[1] > 0 {
		report.Add(orderedStateBench, "top-N and max", "peak RSS at 4x / at 1x (target < 1.6)", peaks[1]/peaks[0], "ratio")
	}
}

// benchOrdered publishes each of m keys twice and waits until the top-N
// view shows every key counted twice under state.memory.budget budget; it
// returns the server's peak RSS.
func benchOrdered(b *testing.B, scale, m int, budget int64) float64 {
	cas := fmt.Sprintf("top-N and max, %dx (%d keys)", scale, m)
	s := startServer(b, "", stateSettings(budget))
	defer s.Kill(b)
	defer watchHeap(b, s)()
	conn := s.Conn(b)
	execTimed(b, conn, "CREATE STREAM os (k BIGINT, v BIGINT) WITH (subject = 'bench.os')")
	execTimed(b, conn, "CREATE MATERIALIZED VIEW oc AS SELECT k, count(*) AS c FROM os GROUP BY k")
	execTimed(b, conn, "CREATE MATERIALIZED VIEW otop AS SELECT k, c FROM oc ORDER BY c DESC, k LIMIT 10")
	execTimed(b, conn, "CREATE MATERIALIZED VIEW omax AS SELECT k % 100 AS g, max(c) AS mc, min(c) AS nc FROM oc GROUP BY k % 100")
	execTimed(b, conn, "ALTER SYSTEM PAUSE")
	mm := int64(m)
	sz := currentSizes(b)
	publishAll(b, s.NATSURL(), "bench.os", 2*m, sz.publishers, func(i int) []byte { return event(int64(i)*permPrime%mm, int64(i)) })
	execTimed(b, conn, "ALTER SYSTEM RESUME")
	start := time.Now()
	waitCount(b, conn, "SELECT sum(c) FROM oc", int64(2*m))
	// Every key ends at count 2: the max and the min of each group are 2.
	waitCount(b, conn, "SELECT sum(mc + nc) FROM omax", 4*min(int64(m), 100))
	waitCount(b, conn, "SELECT sum(c) FROM otop", 2*min(int64(m), 10))
	d := time.Since(start)
	_, peak := rssMB(s.PID())
	report.Add(orderedStateBench, cas, "time until every view is current", d.Seconds(), "s")
	report.Add(orderedStateBench, cas, "rate", float64(2*m)/d.Seconds(), "events/s")
	report.Add(orderedStateBench, cas, "server peak RSS", peak, "MiB")
	report.Add(orderedStateBench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	return peak
}
