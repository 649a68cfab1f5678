package node

import (
	"streamdb/gcpace"
	"streamdb/storage"
)

// TuneProcess sets the process up as the server runs: the garbage
// collector paced by state.memory.budget unless the operator chose GOGC
// (gcpace; the runtime's SetMemoryBudget gives it the budget), and glibc's
// allocator for Pebble (storage.TuneCAllocator). The server calls it once
// at start; so do benchmarks that run the engine in process, so that the
// memory they report is the server's.
func TuneProcess() {
	gcpace.Start()
	storage.TuneCAllocator()
}
