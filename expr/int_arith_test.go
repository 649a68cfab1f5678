package expr

import (
	"math"
	"testing"

	"streamdb/sqlerr"
	"streamdb/types"
)

// TestIntArith checks integer operators against what PostgreSQL 15
// answers: results, NULLs, and 22003/22012 at the edges of each type.
func TestIntArith(t *testing.T) {
	null := types.Null
	i := types.NewInt
	cases := []struct {
		op   string
		t    types.Type
		a, b types.Datum
		want types.Datum
		code string
	}{
		{"+", types.Int2, i(32766), i(1), i(32767), ""},
		{"+", types.Int2, i(32767), i(1), null, sqlerr.NumericValueOutOfRange},
		{"-", types.Int2, i(-32768), i(1), null, sqlerr.NumericValueOutOfRange},
		{"*", types.Int4, i(math.MaxInt32), i(2), null, sqlerr.NumericValueOutOfRange},
		{"*", types.Int4, i(-65536), i(32768), i(math.MinInt32), ""},
		{"+", types.Int8, i(math.MaxInt64), i(1), null, sqlerr.NumericValueOutOfRange},
		{"-", types.Int8, i(math.MinInt64), i(1), null, sqlerr.NumericValueOutOfRange},
		{"*", types.Int8, i(math.MinInt64), i(-1), null, sqlerr.NumericValueOutOfRange},
		{"*", types.Int8, i(-4611686018427387904), i(2), i(math.MinInt64), ""},
		{"/", types.Int8, i(math.MinInt64), i(-1), null, sqlerr.NumericValueOutOfRange},
		{"/", types.Int2, i(-32768), i(-1), null, sqlerr.NumericValueOutOfRange},
		{"/", types.Int4, i(-7), i(2), i(-3), ""},
		{"/", types.Int4, i(7), i(0), null, sqlerr.DivisionByZero},
		{"%", types.Int8, i(-7), i(3), i(-1), ""},
		{"%", types.Int8, i(7), i(-3), i(1), ""},
		{"%", types.Int8, i(math.MinInt64), i(-1), i(0), ""},
		{"%", types.Int2, i(-32768), i(-1), i(0), ""},
		{"%", types.Int4, i(7), i(0), null, sqlerr.DivisionByZero},
		{"%", types.Int4, null, i(0), null, ""},
		{"+", types.Int4, i(1), null, null, ""},
		{"/", types.Int4, null, i(0), null, ""},
	}
	for _, c := range cases {
		e, err := Binary(c.op, &Const{D: c.a, T: c.t}, &ColRef{Idx: 0, T: c.t})
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		// Eval reads the integers of its arguments; Fn2 takes datums.
		for how, eval := range map[string]func() (types.Datum, error){
			"Eval": func() (types.Datum, error) { return e.Eval(types.Row{c.b}) },
			"Fn2":  func() (types.Datum, error) { return e.(*Func).Fn2(c.a, c.b) },
		} {
			got, err := eval()
			if sqlerr.Code(err) != c.code {
				t.Errorf("%s: %v::%s %s %v: error %v, want SQLSTATE %q", how, c.a, c.t, c.op, c.b, err, c.code)
				continue
			}
			if err == nil && (got.K != c.want.K || got.I != c.want.I) {
				t.Errorf("%s: %v::%s %s %v = %v, want %v", how, c.a, c.t, c.op, c.b, got, c.want)
			}
		}
	}
}

// TestNegateInt checks unary minus at the edge of smallint.
func TestNegateInt(t *testing.T) {
	e, err := Negate(&ColRef{Idx: 0, T: types.Int2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Eval(types.Row{types.NewInt(-32768)}); sqlerr.Code(err) != sqlerr.NumericValueOutOfRange {
		t.Errorf("-(-32768::smallint): error %v, want 22003", err)
	}
	if d, err := e.Eval(types.Row{types.NewInt(5)}); err != nil || d.I != -5 {
		t.Errorf("-(5::smallint) = %v, %v", d, err)
	}
}

// TestIntArithNested checks a call whose argument is another call:
// (c0 * 2) % c1, with NULLs and errors coming from either.
func TestIntArithNested(t *testing.T) {
	c0, c1 := &ColRef{Idx: 0, T: types.Int8}, &ColRef{Idx: 1, T: types.Int8}
	mul, err := Binary("*", c0, &Const{D: types.NewInt(2), T: types.Int8})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Binary("%", mul, c1)
	if err != nil {
		t.Fatal(err)
	}
	i := types.NewInt
	cases := []struct {
		row  types.Row
		want types.Datum
		code string
	}{
		{types.Row{i(7), i(4)}, i(2), ""},
		{types.Row{types.Null, i(4)}, types.Null, ""},
		{types.Row{i(7), types.Null}, types.Null, ""},
		{types.Row{i(math.MaxInt64), i(4)}, types.Null, sqlerr.NumericValueOutOfRange},
		{types.Row{i(7), i(0)}, types.Null, sqlerr.DivisionByZero},
	}
	for _, c := range cases {
		got, err := e.Eval(c.row)
		if sqlerr.Code(err) != c.code || err == nil && (got.K != c.want.K || got.I != c.want.I) {
			t.Errorf("(%v * 2) %% %v = %v, %v; want %v, SQLSTATE %q", c.row[0], c.row[1], got, err, c.want, c.code)
		}
	}
}
