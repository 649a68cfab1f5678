package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile honours STREAMDB_CPUPROFILE=path: a CPU profile of the
// whole server run, written when it stops cleanly (SIGTERM/SIGINT). The
// returned function stops it; it is a no-op when the variable is unset.
func startCPUProfile() (func(), error) {
	path := os.Getenv("STREAMDB_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("STREAMDB_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("STREAMDB_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
