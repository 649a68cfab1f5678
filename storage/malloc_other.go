//go:build !linux || !cgo

package storage

// TuneCAllocator does nothing here: without cgo Pebble allocates in Go's
// heap, and other C libraries have no glibc options (see malloc_glibc.go).
func TuneCAllocator() {}
