package expr

import (
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
