package expr

import (
	"github.com/cockroachdb/apd/v3"
)

// apdExpMaxPrecision is about the precision past which apd's Exp refuses
// ("too many iterations": its series is capped at 1000 terms), which
// e^x needs from x of about 5760 on, below numeric's limit of 6000.
const apdExpMaxPrecision = 2400

// expHalving is e^x at c's precision for any precision: x is halved k
// times until |x| < 0.01, the Taylor series of e^(x/2^k) is summed, and
// the sum is squared k times. Each squaring doubles the relative error,
// so the work carries k*0.31 more digits, plus guard digits.
func expHalving(c *apd.Context, x *apd.Decimal) (*apd.Decimal, error) {
	wc := *c
	wc.Precision = c.Precision + guardDigits
	two, small := apd.New(2, 0), apd.New(1, -2)
	var y apd.Decimal
	y.Set(x)
	k := 0
	for {
		var ay apd.Decimal
		ay.Abs(&y)
		if ay.Cmp(small) < 0 {
			break
		}
		if _, err := wc.Quo(&y, &y, two); err != nil {
			return nil, err
		}
		k++
	}
	wc.Precision += uint32(k*31/100 + 1)
	// sum = 1 + y + y^2/2! + ...; |y| < 0.01 makes each term at least
	// two digits smaller than the last, so the loop ends after about
	// Precision/2 terms, when a term no longer changes the sum.
	sum, term := apd.New(1, 0), apd.New(1, 0)
	var n apd.Decimal
	for i := int64(1); ; i++ {
		n.SetInt64(i)
		if _, err := wc.Mul(term, term, &y); err != nil {
			return nil, err
		}
		if _, err := wc.Quo(term, term, &n); err != nil {
			return nil, err
		}
		var next apd.Decimal
		if _, err := wc.Add(&next, sum, term); err != nil {
			return nil, err
		}
		if next.Cmp(sum) == 0 || term.IsZero() {
			break
		}
		sum.Set(&next)
	}
	for range k {
		if _, err := wc.Mul(sum, sum, sum); err != nil {
			return nil, err
		}
	}
	var r apd.Decimal
	if _, err := c.Round(&r, sum); err != nil {
		return nil, err
	}
	return &r, nil
}
