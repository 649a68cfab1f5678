package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the server's garbage collector target unless GOGC is
// set. Views keep their working state (join rows, cached groups) on the
// heap, and at Go's default of 100 the collector re-marked that large,
// pointer-rich heap so often that it took ~20% of a join-heavy view's CPU;
// at 200 Nexmark q4 caught up ~20% faster for ~1.5x the heap (measured
// side by side, see the closing note of the speed issue).
const defaultGCPercent = 200

// tuneGC applies defaultGCPercent unless the operator chose GOGC.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
