package expr

import (
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// expHalving must agree with apd's Exp where both work, to all but the
// guard digits.
func TestExpHalvingAgreesWithApd(t *testing.T) {
	for _, s := range []string{"1", "-3.5", "100.25", "1500", "-0.001", "0.00999", "-2000.5"} {
		x, _, _ := apd.NewFromString(s)
		c := workCtx(650, 20)
		var want apd.Decimal
		if _, err := c.Exp(&want, x); err != nil {
			t.Fatal(err)
		}
		got, err := expHalving(c, x)
		if err != nil {
			t.Fatal(err)
		}
		var diff, bound apd.Decimal
		exactCtx.Sub(&diff, got, &want)
		diff.Abs(&diff)
		exactCtx.Mul(&bound, &want, apd.New(1, -int32(c.Precision-guardDigits)))
		if diff.Cmp(&bound) > 0 {
			t.Errorf("e^%s: expHalving and apd differ by %s, more than %s", s, diff.Text('e'), bound.Text('e'))
		}
	}
}

// TestExpScaledTinyArgument: e^x for |x| far below 1 differs from 1 at
// the result's scale when the scale reaches x's first digit (PostgreSQL's
// power(2, 1e-1000) is 1.000...0001 at scale 1000).
func TestExpScaledTinyArgument(t *testing.T) {
	for _, c := range []struct {
		x          string
		scale      int32
		head, tail string
	}{
		{"6.9314718055994530942e-1001", 1000, "1.0", "000000000001"},
		{"7e-500", 1000, "1.0", "000000000025"},
		{"-7e-500", 1000, "0.9", "000000000025"},
	} {
		x, _, _ := apd.NewFromString(c.x)
		r, err := expScaled(x, c.scale)
		if err != nil {
			t.Fatal(err)
		}
		s := r.Text('f')
		if !strings.HasPrefix(s, c.head) || !strings.HasSuffix(s, c.tail) || int32(len(s)-strings.IndexByte(s, '.')-1) != c.scale {
			t.Errorf("e^%s at scale %d = ...%s (scale %d), want ...%s", c.x, c.scale, s[max(len(s)-12, 0):], len(s)-strings.IndexByte(s, '.')-1, c.tail)
		}
	}
}
