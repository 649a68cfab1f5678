package bench

import (
	"os"
	"strconv"
	"testing"
)

// stateBudgetPerKey is the bytes of state.memory.budget the state-size
// benchmarks (OrderedState, JoinState) allow per key of their 1x state.
// Their 1x state holds, per key, entries that the budget estimates at
// roughly 768-900 bytes (exec/memory_budget.go: a group and its view row
// plus a top-N row; or a join row on each side), so a budget of 256 bytes
// a key is a third to a quarter of the 1x state: both scales run past the
// budget, and the 4x/1x ratio of peak RSS measures growth beyond it, not
// growth up to it.
const stateBudgetPerKey = 256

// stateBudget returns the state.memory.budget, in bytes, of a
// state-size benchmark whose 1x state has keys keys; BENCH_STATE_BUDGET
// (bytes) overrides.
func stateBudget(b *testing.B, keys int) int64 {
	if v := os.Getenv("BENCH_STATE_BUDGET"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("BENCH_STATE_BUDGET=%q: want a positive number of bytes", v)
		}
		return n
	}
	return int64(keys) * stateBudgetPerKey
}

// stateSettings are the server settings of a state-size benchmark: no
// periodic checkpoints, and the given memory budget.
func stateSettings(budget int64) map[string]string {
	return map[string]string{
		"execution.checkpointing.interval": "0",
		"state.memory.budget":              strconv.FormatInt(budget, 10),
	}
}
