// Package faults names the points where a crash test makes the server
// die as kill -9 would, at a moment no signal from outside can hit
// reliably (between two messages of one commit, say).
//
// The points to crash at are listed, comma-separated, in the environment
// variable STREAMDB_FAULTS when the process starts; without it every
// point does nothing.
package faults

import (
	"os"
	"strings"
	"syscall"
)

var points = parse(os.Getenv("STREAMDB_FAULTS"))

func parse(s string) map[string]bool {
	if s == "" {
		return nil
	}
	out := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		out[strings.TrimSpace(p)] = true
	}
	return out
}

// Crash kills the process with SIGKILL if point is listed.
func Crash(point string) {
	if !points[point] {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal ends the process
}
