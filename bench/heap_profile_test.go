package bench

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// BENCH_HEAPPROFILE_DIR asks the memory benchmarks for the server's heap
// profile (go tool pprof -sample_index=inuse_space) at its highest RSS:
// the server serves /debug/pprof (--pprof), and watchHeap saves the
// profile each time a sample of RSS exceeds every earlier one.

// heapProfileArgs are the server arguments BENCH_HEAPPROFILE_DIR needs.
func heapProfileArgs() []string {
	if os.Getenv("BENCH_HEAPPROFILE_DIR") == "" {
		return nil
	}
	return []string{"--pprof"}
}

// watchHeap samples s's RSS every second until the returned function is
// called, saving the heap profile into BENCH_HEAPPROFILE_DIR, named after
// the benchmark, at each new highest sample. Without the variable it does
// nothing.
func watchHeap(b *testing.B, s *testutil.Server) (stop func()) {
	dir := os.Getenv("BENCH_HEAPPROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	name := strings.NewReplacer("/", "-", " ", "_").Replace(b.Name())
	path := filepath.Join(dir, name+".heap")
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var highest float64
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if cur, _ := rssMB(s.PID()); cur > highest {
				highest = cur
				if err := saveHeapProfile(s.HTTPURL()+"/debug/pprof/heap", path); err != nil {
					b.Logf("heap profile: %v", err)
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// saveHeapProfile writes the profile at url to path.
func saveHeapProfile(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
