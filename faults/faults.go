// Package faults names the points where a crash test makes the server
// die as kill -9 would, at a moment no signal from outside can hit
// reliably (between two messages of one commit, say).
//
// The points to crash at are listed, comma-separated, in the environment
// variable STREAMDB_FAULTS when the process starts; without it every
// point does nothing. STREAMDB_FAULT_DURATIONS slows points down and
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

var fired sync.Map

// FailOnce reports true the first time it is called at point, if point
// is listed in STREAMDB_FAULTS: the caller then fails as a transient
// error would (a read that a reconnecting connection refused).
func FailOnce(point string) bool {
	if !points[point] {
		return false
	}
	_, done := fired.LoadOrStore(point, true)
	return !done
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
