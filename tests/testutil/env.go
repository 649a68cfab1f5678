package testutil

import (
	"os"
	"strconv"
	"testing"
)

// EnvInt returns the integer in the environment variable name, or def
// when it is unset: the way a long test lets a run change its size. A
// value that is not an integer of at least min fails the test.
func EnvInt(t testing.TB, name string, def, min int64) int64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < min {
		t.Fatalf("%s=%q: want an integer of at least %d", name, s, min)
	}
	return n
}
