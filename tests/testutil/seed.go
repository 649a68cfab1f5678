package testutil

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Seed returns the seed of a test's random choices: the value of the
// environment variable env when set, else the clock. It logs the seed and
// how to replay it at once, and again if the test fails, so that every
// failure names its seed.
func Seed(t testing.TB, env string) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(env); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", env, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay: %s=%d go test -run '^%s$')", seed, env, seed, t.Name())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d: replay with %s=%d", seed, env, seed)
		}
	})
	return seed
}

// Poll calls check until it returns nil; if timeout passes first, the
// last error fails the test. Tests wait on state this way, never by fixed
// sleeps.
func Poll(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if what == "" {
				t.Fatalf("not true within %v: %v", timeout, err)
			}
			t.Fatalf("%s: not true within %v: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
