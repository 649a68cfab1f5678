package pgwire

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// TestNumericRoundTrip encodes random decimals and decodes them with pgx's
// numeric codec: value and scale must survive.
func TestNumericRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		coeff := r.Int64N(1_000_000_000_000) >> r.IntN(40)
		if r.IntN(2) == 0 {
			coeff = -coeff
		}
		in := apd.New(coeff, int32(r.IntN(40)-25))
		b, err := appendNumeric(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeBinary(b, types.Numeric)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got.D.Cmp(in) != 0 || (in.Exponent < 0 && got.D.Exponent != in.Exponent) {
			t.Fatalf("%s (exp %d) came back as %s (exp %d), bytes %x", in, in.Exponent, got.D, got.D.Exponent, b)
		}
	}
	for _, s := range []string{"NaN", "Infinity", "-Infinity"} {
		in, _, _ := apd.NewFromString(s)
		b, _ := appendNumeric(nil, in)
		got, err := decodeBinary(b, types.Numeric)
		if err != nil || fmt.Sprint(got.D) != s {
			t.Errorf("%s: got %v, %v", s, got.D, err)
		}
	}
}
