package keyenc

import (
	"bytes"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"streamdb/types"
)

// pgIntervalCmp is PostgreSQL 15's interval_cmp_internal: intervals
// compare by interval_cmp_value, the 128-bit span in microseconds with a
// month of 30 days and a day of 24 hours.
func pgIntervalCmp(a, b types.Datum) int {
	span := func(d types.Datum) *big.Int {
		s := big.NewInt(int64(d.Months))
		s.Mul(s, big.NewInt(30))
		s.Add(s, big.NewInt(int64(d.Days)))
		s.Mul(s, big.NewInt(types.UsecsPerDay))
		return s.Add(s, big.NewInt(d.I))
	}
	return span(a).Cmp(span(b))
}

// TestIntervalSpanKeys: comparison keys of intervals (AppendCmp) order
// and group as PostgreSQL compares intervals, over pairs PostgreSQL 15
// answers and random intervals built from few components (so that equal
// spans written differently come up) and from extreme ones; each key
// decodes to an interval equal to the one encoded. types.Compare agrees.
func TestIntervalSpanKeys(t *testing.T) {
	iv := types.NewInterval
	const h = 3600e6
	// SELECT a = b, a < b in PostgreSQL 15.
	fixed := []struct {
		a, b types.Datum
		want int
	}{
		{iv(0, 1, 0), iv(0, 0, 24*h), 0},                      // '1 day' = '24 hours'
		{iv(1, 0, 0), iv(0, 30, 0), 0},                        // '1 mon' = '30 days'
		{iv(1, 0, 0), iv(0, 31, 0), -1},                       // '1 mon' < '31 days'
		{iv(1, 0, 0), iv(0, 29, 24*h-1e6), 1},                 // '1 mon' > '29 days 23:59:59'
		{iv(0, 0, -h), iv(0, 1, -25*h), 0},                    // '-1 hour' = '1 day -25 hours'
		{iv(0, -1, 0), iv(0, 0, -24*h-1), 1},                  // '-1 day' > '-24:00:00.000001'
		{iv(12, 0, 0), iv(0, 360, 0), 0},                      // '1 year' = '360 days'
		{iv(math.MaxInt32, 0, 0), iv(0, math.MaxInt32, 0), 1}, // spans beyond 64 bits of microseconds
		{iv(math.MinInt32, math.MinInt32, math.MinInt64), iv(math.MinInt32, math.MinInt32, math.MinInt64+1), -1},
	}
	for _, c := range fixed {
		if got := sign(bytes.Compare(AppendCmp(nil, c.a), AppendCmp(nil, c.b))); got != c.want {
			t.Errorf("keys of %+v and %+v compare %d, PostgreSQL %d", c.a, c.b, got, c.want)
		}
		if got := types.Compare(c.a, c.b); got != c.want {
			t.Errorf("types.Compare(%+v, %+v) = %d, PostgreSQL %d", c.a, c.b, got, c.want)
		}
	}

	seed := int64(7)
	rng := rand.New(rand.NewSource(seed))
	small := func() types.Datum {
		return iv(int32(rng.Intn(5)-2), int32(rng.Intn(90)-45), int64(rng.Intn(97)-48)*h)
	}
	wide := func() types.Datum {
		return iv(int32(rng.Uint32()), int32(rng.Uint32()), int64(rng.Uint64()))
	}
	for i := 0; i < 20000; i++ {
		gen := small
		if i%2 == 1 {
			gen = wide
		}
		a, b := gen(), gen()
		want := pgIntervalCmp(a, b)
		ka, kb := AppendCmp(nil, a), AppendCmp(nil, b)
		if got := sign(bytes.Compare(ka, kb)); got != want {
			t.Fatalf("seed %d: keys of %+v and %+v compare %d, PostgreSQL %d", seed, a, b, got, want)
		}
		if got := types.Compare(a, b); got != want {
			t.Fatalf("seed %d: types.Compare(%+v, %+v) = %d, PostgreSQL %d", seed, a, b, got, want)
		}
		got, rest, err := Decode(ka)
		if err != nil || len(rest) != 0 || got.K != types.KindInterval || pgIntervalCmp(got, a) != 0 {
			t.Fatalf("seed %d: key of %+v decodes to %+v (%v, %d bytes left)", seed, a, got, err, len(rest))
		}
	}
}
