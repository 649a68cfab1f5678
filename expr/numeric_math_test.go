package expr

import (
	"strings"
	"testing"

	"streamdb/sqlerr"
	"streamdb/types"
)

// TestNumericMath checks the numeric math functions against PostgreSQL
// 15's answers (its scale choice and rounding included).
func TestNumericMath(t *testing.T) {
	cases := []struct {
		fn   string
		args []string
		want string
	}{
		{"power", []string{"2", "0.5"}, "1.4142135623730950"},
		{"sqrt", []string{"2"}, "1.414213562373095"},
		{"exp", []string{"1"}, "2.7182818284590452"},
		{"ln", []string{"10"}, "2.3025850929940457"},
		{"log", []string{"1000"}, "3.0000000000000000"},
		{"log", []string{"2", "8"}, "3.0000000000000000"},
		{"power", []string{"9223372036854775807.5", "0.5"}, "3037000499.9760497"},
		{"ln", []string{"1e-20"}, "-46.05170185988091368036"},
		{"power", []string{"2905.637402716187456", "-93"}, "0.0000000000000000"},
		{"power", []string{"-2", "3"}, "-8.0000000000000000"},
		{"exp", []string{"-5000"}, "0." + strings.Repeat("0", 1000)},
		{"ceil", []string{"1e-20"}, "1"},
		{"floor", []string{"-1e-20"}, "-1"},
		{"round", []string{"1.5", "-2000"}, "0"},
		{"power", []string{"0", "-1"}, "ERROR 2201F"},
		{"power", []string{"-2", "0.5"}, "ERROR 2201F"},
		{"ln", []string{"0"}, "ERROR 2201E"},
		{"exp", []string{"7000"}, "ERROR 22003"},
	}
	for _, c := range cases {
		var args []Expr
		for i, a := range c.args {
			typ := types.Numeric
			if i == 1 && (c.fn == "round") {
				typ = types.Int4
			}
			d, err := types.ParseText(a, typ)
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, &Const{D: d, T: typ})
		}
		e, err := Call(c.fn, args)
		if err != nil {
			t.Fatalf("%s%v: %v", c.fn, c.args, err)
		}
		got := ""
		if d, err := e.Eval(nil); err != nil {
			got = "ERROR " + sqlerr.Code(err)
		} else {
			got = types.FormatText(d, e.Type())
		}
		if got != c.want {
			t.Errorf("%s(%s) = %s, want %s", c.fn, strings.Join(c.args, ", "), got, c.want)
		}
	}
}
