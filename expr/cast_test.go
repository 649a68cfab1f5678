package expr

import (
	"math"
	"testing"

	"streamdb/types"
)

// TestCastFloatToNumeric checks float8 -> numeric against PostgreSQL's
// results, negative zero included (NUMERIC has none: PostgreSQL gives 0).
func TestCastFloatToNumeric(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{math.Copysign(0, -1), "0"},
		{0, "0"},
		{-1.5, "-1.5"},
		{0.1, "0.1"},
		{123456.789, "123456.789"},
	} {
		e, err := Cast(&Const{D: types.NewFloat(tc.f), T: types.Float8}, types.Numeric)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Eval(nil)
		if err != nil {
			t.Fatalf("%v::numeric: %v", tc.f, err)
		}
		if got := types.FormatText(v, types.Numeric); got != tc.want {
			t.Errorf("%v::numeric = %s, want %s", tc.f, got, tc.want)
		}
	}
}
