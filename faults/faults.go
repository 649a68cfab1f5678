// Package faults names the points where a crash test makes the server
// die as kill -9 would, at a moment no signal from outside can hit
// reliably (between two messages of one commit, say).
//
// The points to crash or fail at are listed, comma-separated, in the
// environment variable STREAMDB_FAULTS when the process starts (a point
// to fail at may say how many times, as point=N); without it every point
// does nothing. STREAMDB_FAULT_DURATIONS slows points down and
// shortens windows the same way, and STREAMDB_FAULT_SIZES lowers limits
// so that a test meets at a small size what a large one meets.
package faults

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var points, failTimes = parse(os.Getenv("STREAMDB_FAULTS"))

// parse returns the points listed in s and, for those given as point=N,
// N: how many times Fail fails there.
func parse(s string) (map[string]bool, map[string]int64) {
	if s == "" {
		return nil, nil
	}
	out, times := map[string]bool{}, map[string]int64{}
	for _, p := range strings.Split(s, ",") {
		name, n, counted := strings.Cut(strings.TrimSpace(p), "=")
		out[name] = true
		if k, err := strconv.ParseInt(n, 10, 64); counted && err == nil && k > 0 {
			times[name] = k
		}
	}
	return out, times
}

// Crash kills the process with SIGKILL if point is listed.
func Crash(point string) {
	if !points[point] {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal ends the process
}

// durations are the lengths given, as name=duration pairs
// (comma-separated), in STREAMDB_FAULT_DURATIONS: how long Sleep waits at
// a point, or a shorter window for a test (Duration).
var durations = parseDurations(os.Getenv("STREAMDB_FAULT_DURATIONS"))

func parseDurations(s string) map[string]time.Duration {
	if s == "" {
		return nil
	}
	out := map[string]time.Duration{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if d, err := time.ParseDuration(v); ok && err == nil {
			out[k] = d
		}
	}
	return out
}

// Sleep waits at point for the duration STREAMDB_FAULT_DURATIONS gives it
// (none: no wait), as a slow disk or network would.
func Sleep(point string) {
	if d := durations[point]; d > 0 {
		time.Sleep(d)
	}
}

// Duration returns the duration STREAMDB_FAULT_DURATIONS gives name, or
// def.
func Duration(name string, def time.Duration) time.Duration {
	if d, ok := durations[name]; ok {
		return d
	}
	return def
}

var (
	firedMu sync.Mutex
	fired   = map[string]int64{}
)

// Fail reports true the first N times it is called at point, if point is
// listed in STREAMDB_FAULTS as point=N (once if listed without N): the
// caller then fails as a transient error would (a read that a
// reconnecting connection refused).
func Fail(point string) bool {
	if !points[point] {
		return false
	}
	n := max(failTimes[point], 1)
	firedMu.Lock()
	defer firedMu.Unlock()
	if fired[point] >= n {
		return false
	}
	fired[point]++
	return true
}

// sizes are the byte counts given, as name=bytes pairs (comma-separated),
// in STREAMDB_FAULT_SIZES: a lower limit for a test (Size).
var sizes = parseSizes(os.Getenv("STREAMDB_FAULT_SIZES"))

func parseSizes(s string) map[string]int64 {
	if s == "" {
		return nil
	}
	out := map[string]int64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil && n > 0 {
			out[k] = n
		}
	}
	return out
}

// Size returns the byte count STREAMDB_FAULT_SIZES gives name, or def.
func Size(name string, def int64) int64 {
	if n, ok := sizes[name]; ok {
		return n
	}
	return def
}
