package expr

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// The expected values are what PostgreSQL 15 prints for a::numeric / b::numeric.
func TestDivDecimalMatchesPostgres(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{"9", "2", "4.5000000000000000"},
		{"3", "6", "0.50000000000000000000"},
		{"1", "3", "0.33333333333333333333"},
		{"10", "4", "2.5000000000000000"},
		{"100000", "3", "33333.333333333333"},
		{"12345", "1", "12345.0000000000000000"},
		{"1.50", "2", "0.75000000000000000000"},
		{"-7", "2", "-3.5000000000000000"},
		{"840", "2", "420.0000000000000000"},
	}
	for _, c := range cases {
		a, _, _ := apd.NewFromString(c.a)
		b, _, _ := apd.NewFromString(c.b)
		got := DivDecimal(a, b).D.Text('f')
		if got != c.want {
			t.Errorf("%s / %s = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}
