package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// NegateLiteral folds a minus sign into the number literal c, as
// PostgreSQL's grammar does before typing it: the negated digits are typed
// by their value, so -2147483648 is an integer and -9223372036854775808 a
// bigint although their magnitudes are not, and -(-2147483648) a bigint.
// The caller passes only constants written as literals (a cast or a NULL
// is negated by Negate at run time).
func NegateLiteral(c *Const) (Expr, bool) {
	if c.D.IsNull() {
		return nil, false
	}
	var neg apd.Decimal
	switch c.T {
	case types.Int4, types.Int8:
		neg.SetInt64(c.D.I)
	case types.Numeric:
		neg.Set(c.D.D)
	default:
		return nil, false
	}
	neg.Neg(&neg)
	if neg.Form == apd.Finite && neg.Exponent == 0 {
		if i, err := neg.Int64(); err == nil {
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return &Const{D: types.NewInt(i), T: types.Int4}, true
			}
			return &Const{D: types.NewInt(i), T: types.Int8}, true
		}
	}
	return &Const{D: types.NewDecimal(NormalizeZero(&neg)), T: types.Numeric}, true
}
