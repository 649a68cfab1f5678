package expr

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"streamdb/types"
)

// TestJSONBMemberMatchesParse checks jsonb -> and ->> read from the text
// (jsonbMember) against the same on the parsed value, over random
// documents: nesting, escapes, unicode, numbers at the edges, duplicate
// and missing keys, scalars and arrays at the top.
func TestJSONBMemberMatchesParse(t *testing.T) {
	const seed = 40
	rng := rand.New(rand.NewSource(seed))
	keys := []string{"a", "b", "k", "ü", `q"x`, `back\slash`, "", "user", "id"}
	var value func(depth int) string
	value = func(depth int) string {
		switch n := rng.Intn(10); {
		case n == 0 && depth < 3:
			parts := []string{}
			for range rng.Intn(4) {
				parts = append(parts, value(depth+1))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		case n <= 2 && depth < 3:
			parts := []string{}
			for range rng.Intn(5) {
				parts = append(parts, fmt.Sprintf("%q: %s", keys[rng.Intn(len(keys))], value(depth+1)))
			}
			return "{" + strings.Join(parts, ",") + "}"
		case n == 3:
			return []string{`"plain"`, `"with \"quote\""`, `"tab\t"`, `"é\u00e9"`, `"}],{["`, `""`}[rng.Intn(6)]
		case n == 4:
			return []string{"null", "true", "false"}[rng.Intn(3)]
		default:
			return []string{"0", "-1", "1.50", "1e3", "-0.0", "123456789012345678901234567890", "1E-7"}[rng.Intn(7)]
		}
	}
	for i := range 3000 {
		src := value(0)
		if i%3 > 0 {
			parts := []string{}
			for range rng.Intn(6) {
				parts = append(parts, fmt.Sprintf("%q: %s", keys[rng.Intn(len(keys))], value(1)))
			}
			src = "{" + strings.Join(parts, ", ") + "}"
		}
		d, err := types.ParseJSONB(src)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, src, err)
		}
		v, err := types.JSONOf(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			for _, asText := range []bool{false, true} {
				got, ok := jsonbMember(d.S, k, asText)
				if !ok {
					continue
				}
				want := jsonResult(v.Lookup(k), d.K, asText)
				if got.K != want.K || got.S != want.S || got.IsNull() != want.IsNull() {
					t.Fatalf("seed %d: %s -> %q (text %v) = %#v, parsed %#v", seed, d.S, k, asText, got, want)
				}
			}
		}
	}
}
