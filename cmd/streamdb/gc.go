package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the server's garbage collector target unless GOGC is
// set. Views keep their working state (join rows, cached groups) on the
// heap, which is large and pointer-rich; at Go's default of 100 the
// collector re-marks it so often that marking takes a large share of a
// join-heavy view's CPU. A higher target trades heap size for that CPU
// (make bench's Nexmark runs measure both).
const defaultGCPercent = 200

// tuneGC applies defaultGCPercent unless the operator chose GOGC.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
