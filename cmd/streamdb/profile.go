package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles honours STREAMDB_CPUPROFILE=path: a CPU profile of the
// whole server run, written when it stops cleanly (SIGTERM/SIGINT), and
// STREAMDB_MEMPROFILE=path: the allocation profile of the run (see
// `go tool pprof -sample_index=alloc_space`), written at the same point.
// The returned function stops and writes them; it is a no-op when neither
// variable is set.
func startProfiles() (func(), error) {
	memPath := os.Getenv("STREAMDB_MEMPROFILE")
	writeMem := func() {
		if memPath == "" {
			return
		}
		f, err := os.Create(memPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "STREAMDB_MEMPROFILE: %v\n", err)
			return
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fmt.Fprintf(os.Stderr, "STREAMDB_MEMPROFILE: %v\n", err)
		}
	}
	path := os.Getenv("STREAMDB_CPUPROFILE")
	if path == "" {
		return writeMem, nil
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
		writeMem()
	}, nil
}
