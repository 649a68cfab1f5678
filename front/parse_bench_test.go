package front

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkParseTerms parses SELECT 1+1+...+1 with 10k to 100k terms and
// logs the time per term of each size relative to the smallest: about 1
// when parsing is linear. Not asserted: timings depend on the machine.
func BenchmarkParseTerms(b *testing.B) {
	sizes := []int{10_000, 20_000, 40_000, 100_000}
	perTerm := make([]time.Duration, len(sizes))
	for k, n := range sizes {
		q := "SELECT " + strings.Repeat("1+", n) + "1"
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := Parse(q); err != nil {
					b.Fatal(err)
				}
			}
			perTerm[k] = time.Since(start) / time.Duration(b.N*n)
		})
	}
	for k, n := range sizes {
		if perTerm[0] > 0 {
			b.Logf("%7d terms: %v per term, %.2fx the time per term at %d", n, perTerm[k], float64(perTerm[k])/float64(perTerm[0]), sizes[0])
		}
	}
}
