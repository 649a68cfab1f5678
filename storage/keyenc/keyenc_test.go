package keyenc

import (
	"bytes"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// TestOrderPreserved checks that byte order of encodings is value order,
// over random values of each kind, with NULL last.
func TestOrderPreserved(t *testing.T) {
	seed := int64(42)
	rng := rand.New(rand.NewSource(seed))
	gens := map[string]func() types.Datum{
		"int":   func() types.Datum { return types.NewInt(rng.Int63() - rng.Int63()) },
		"float": func() types.Datum { return types.NewFloat(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(20)-10))) },
		"string": func() types.Datum {
			b := make([]byte, rng.Intn(6))
			for i := range b {
				b[i] = byte(rng.Intn(4)) // includes 0x00 bytes
			}
			return types.NewString(string(b))
		},
		"timestamp": func() types.Datum { return types.NewTimestamp2000(rng.Int63() - rng.Int63()) },
		"time":      func() types.Datum { return types.NewTimeOfDay(rng.Int63n(types.UsecsPerDay + 1)) },
		// Few distinct times and zones, so that equal instants in
		// different zones (ordered by zone) come up.
		"timetz": func() types.Datum {
			return types.NewTimeTZ(int64(rng.Intn(4))*3600e6, int32(rng.Intn(3)-1)*3600)
		},
	}
	for name, gen := range gens {
		vals := make([]types.Datum, 500)
		for i := range vals {
			vals[i] = gen()
		}
		vals = append(vals, types.Null)
		sort.Slice(vals, func(i, j int) bool {
			return bytes.Compare(Append(nil, vals[i]), Append(nil, vals[j])) < 0
		})
		for i := 1; i < len(vals); i++ {
			if types.Compare(vals[i-1], vals[i]) > 0 || (types.Compare(vals[i-1], vals[i]) == 0) != bytes.Equal(Append(nil, vals[i-1]), Append(nil, vals[i])) {
				t.Fatalf("%s (seed %d): %v sorts before %v by bytes but after by value", name, seed, vals[i-1], vals[i])
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	dec, _, _ := apd.NewFromString("-12.340")
	row := types.Row{
		types.Null, types.NewBool(true), types.NewInt(-7), types.NewFloat(2.5), types.NewFloat(math.Copysign(0, -1)),
		types.NewDecimal(dec), types.NewString("a\x00b"), types.NewDate(19000), types.NewTimestamp2000(123456789),
		types.NewInterval(1, 2, 3), types.NewTimeOfDay(types.UsecsPerDay), types.NewTimeTZ(45296789000, -7200),
	}
	got, rest, err := DecodeRow(AppendRowValue(nil, row), len(row))
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v (rest %d)", err, len(rest))
	}
	for i := range row {
		if types.Compare(row[i], got[i]) != 0 || row[i].K != got[i].K {
			t.Errorf("column %d: got %+v, want %+v", i, got[i], row[i])
		}
	}
	if got[5].D.Text('f') != "-12.340" {
		t.Errorf("value encoding changed the scale of a numeric: %s", got[5].D.Text('f'))
	}
	if !math.Signbit(got[4].F) {
		t.Errorf("value encoding lost the sign of -0")
	}
	if k, _, _ := Decode(Append(nil, types.NewFloat(math.Copysign(0, -1)))); math.Signbit(k.F) {
		t.Errorf("key encoding must fold -0 into 0 (they are equal keys)")
	}
}
