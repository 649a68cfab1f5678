package expr

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// promote returns the common type of two numeric operands, PostgreSQL style:
// integers widen, any float makes float8, numeric beats integers.
func promote(l, r types.Type) types.Type {
	switch {
	case l == types.Float4 && r == types.Float4:
		return types.Float4
	case l == types.Float8 || r == types.Float8 || l == types.Float4 || r == types.Float4:
		// real with anything else resolves through float8 operators
		return types.Float8
	case l == types.Numeric || r == types.Numeric:
		return types.Numeric
	case l == types.Int8 || r == types.Int8:
		return types.Int8
	case l == types.Int4 || r == types.Int4:
		return types.Int4
	}
	return types.Int2
}

// unify casts an Unknown-typed side (a string literal or untyped parameter)
// to the other side's type, as PostgreSQL resolves unknown literals.
func unify(l, r Expr) (Expr, Expr, error) {
	var err error
	lt, rt := l.Type(), r.Type()
	switch {
	case lt == types.Unknown && rt == types.Unknown:
		if l, err = Cast(l, types.Text); err != nil {
			return nil, nil, err
		}
		r, err = Cast(r, types.Text)
	case lt == types.Unknown:
		l, err = Cast(l, rt)
	case rt == types.Unknown:
		r, err = Cast(r, lt)
	}
	return l, r, err
}

// Binary builds the expression "l op r" for a SQL operator.
func Binary(op string, l, r Expr) (Expr, error) {
	op = strings.ToUpper(op)
	if f, ok, err := jsonBinary(op, l, r); ok {
		return f, err
	}
	switch op {
	case "AND", "OR":
		return logic(op, l, r)
	case "||":
		return concat(l, r)
	case "LIKE", "ILIKE":
		return like(op, l, r, false)
	}
	l, r, err := unifyTimeOfDay(op, l, r)
	if err != nil {
		return nil, err
	}
	if l, r, err = unifyDateTimeArith(op, l, r); err != nil {
		return nil, err
	}
	if l, r, err = unify(l, r); err != nil {
		return nil, err
	}
	switch op {
	case "=", "<>", "!=", "<", "<=", ">", ">=", "<=>":
		return compare(op, l, r)
	case "+", "-", "*", "/", "%":
		return arith(op, l, r)
	}
	if isBitOp(op) {
		return bitOp(op, l, r)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported", op)
}

func comparable(l, r types.Type) bool {
	switch {
	case l == r:
		return true
	case l.IsNumeric() && r.IsNumeric():
		return true
	case l.IsString() && r.IsString():
		return true
	case (l.IsTime() || l == types.Date) && (r.IsTime() || r == types.Date):
		return true
	case l == types.Time && (r == types.TimeTZ || r == types.Interval), r == types.Time && (l == types.TimeTZ || l == types.Interval):
		return true
	}
	return false
}

func compare(op string, l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	if op == "!=" {
		op = "<>"
	}
	test := compareTest(op)
	if lt.IsArray() || rt.IsArray() {
		return arrayCompare(op, l, r, test)
	}
	if !comparable(lt, rt) {
		return nil, opTypeError(op, lt, rt)
	}
	// Times compare with timetz and intervals as those; dates with
	// timestamps as midnight timestamps (dateCompareKey).
	l, r, _, err := timeOfDayCompareCast(l, r)
	if err != nil {
		return nil, err
	}
	dateLeft, dateRight := lt == types.Date && rt.IsTime(), rt == types.Date && lt.IsTime()
	keys := func(a, b types.Datum) (types.Datum, types.Datum) {
		switch {
		case dateLeft:
			a = dateCompareKey(a)
		case dateRight:
			b = dateCompareKey(b)
		}
		return a, b
	}
	if l, r, err = floatCompareCast(l, r); err != nil {
		return nil, err
	}
	if op == "<=>" {
		return &Func{Name: "IS NOT DISTINCT FROM", Infix: true, Args: []Expr{l, r}, T: types.Bool,
			Fn: func(a []types.Datum) (types.Datum, error) {
				if a[0].IsNull() || a[1].IsNull() {
					return types.NewBool(a[0].IsNull() && a[1].IsNull()), nil
				}
				x, y := keys(a[0], a[1])
				return types.NewBool(types.Compare(x, y) == 0), nil
			}}, nil
	}
	return binary(&Func{Name: op, Infix: true, Args: []Expr{l, r}, T: types.Bool},
		func(a, b types.Datum) (types.Datum, error) {
			if a.IsNull() || b.IsNull() {
				return types.Null, nil
			}
			a, b = keys(a, b)
			return types.NewBool(test(types.Compare(a, b))), nil
		}), nil
}

// floatCompareCast casts both sides of a comparison between numeric and
// real or double precision to double precision, as PostgreSQL resolves
// it (there is no mixed operator): the numeric rounds to the nearest
// double, and one beyond its range is 22003.
func floatCompareCast(l, r Expr) (Expr, Expr, error) {
	lt, rt := l.Type(), r.Type()
	isFloat := func(t types.Type) bool { return t == types.Float4 || t == types.Float8 }
	if !(lt == types.Numeric && isFloat(rt) || rt == types.Numeric && isFloat(lt)) {
		return l, r, nil
	}
	var err error
	if l, err = Cast(l, types.Float8); err != nil {
		return nil, nil, err
	}
	if r, err = Cast(r, types.Float8); err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// compareTest is the test of a comparison operator on a three-way
// comparison's result.
func compareTest(op string) func(c int) bool {
	switch op {
	case "<>":
		return func(c int) bool { return c != 0 }
	case "<":
		return func(c int) bool { return c < 0 }
	case "<=":
		return func(c int) bool { return c <= 0 }
	case ">":
		return func(c int) bool { return c > 0 }
	case ">=":
		return func(c int) bool { return c >= 0 }
	}
	return func(c int) bool { return c == 0 } // = and <=>
}

// unary sets f's Fn1 to fn and its Fn to the same over a slice.
func unary(f *Func, fn func(a types.Datum) (types.Datum, error)) *Func {
	f.Fn1 = fn
	f.Fn = func(a []types.Datum) (types.Datum, error) { return fn(a[0]) }
	return f
}

// binary sets f's Fn2 to fn and its Fn to the same over a slice.
func binary(f *Func, fn func(a, b types.Datum) (types.Datum, error)) *Func {
	f.Fn2 = fn
	f.Fn = func(a []types.Datum) (types.Datum, error) { return fn(a[0], a[1]) }
	return f
}

func requireBool(e Expr) (Expr, error) {
	if e.Type() == types.Unknown {
		return Cast(e, types.Bool)
	}
	if e.Type() != types.Bool {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of boolean operator must be type boolean, not type %s", e.Type())
	}
	return e, nil
}

func logic(op string, l, r Expr) (Expr, error) {
	var err error
	if l, err = requireBool(l); err != nil {
		return nil, err
	}
	if r, err = requireBool(r); err != nil {
		return nil, err
	}
	isAnd := op == "AND"
	return &Func{Name: op, Infix: true, Args: []Expr{l, r}, T: types.Bool,
		Lazy: func(args []Expr, row types.Row) (types.Datum, error) {
			a, err := args[0].Eval(row)
			if err != nil {
				return types.Null, err
			}
			// Short-circuit: FALSE AND x is FALSE, TRUE OR x is TRUE.
			if !a.IsNull() && a.Bool() != isAnd {
				return a, nil
			}
			b, err := args[1].Eval(row)
			if err != nil {
				return types.Null, err
			}
			switch {
			case !b.IsNull() && b.Bool() != isAnd:
				return b, nil
			case a.IsNull() || b.IsNull():
				return types.Null, nil
			}
			return types.NewBool(isAnd), nil
		}}, nil
}

// Not builds NOT e.
func Not(e Expr) (Expr, error) {
	e, err := requireBool(e)
	if err != nil {
		return nil, err
	}
	return &Func{Name: "NOT", Infix: true, Args: []Expr{e}, T: types.Bool, Fn: func(a []types.Datum) (types.Datum, error) {
		if a[0].IsNull() {
			return a[0], nil
		}
		return types.NewBool(!a[0].Bool()), nil
	}}, nil
}

// IsNull builds "e IS NULL" (or IS NOT NULL when not is set).
func IsNull(e Expr, not bool) Expr {
	name := "IS NULL"
	if not {
		name = "IS NOT NULL"
	}
	return &Func{Name: name, Args: []Expr{e}, T: types.Bool, Fn: func(a []types.Datum) (types.Datum, error) {
		return types.NewBool(a[0].IsNull() != not), nil
	}}
}

// IsTruth builds "e IS [NOT] TRUE|FALSE".
func IsTruth(e Expr, want, not bool) (Expr, error) {
	e, err := requireBool(e)
	if err != nil {
		return nil, err
	}
	return &Func{Name: isTruthName(want, not), Args: []Expr{e}, T: types.Bool, Fn: func(a []types.Datum) (types.Datum, error) {
		is := !a[0].IsNull() && a[0].Bool() == want
		return types.NewBool(is != not), nil
	}}, nil
}

func concat(l, r Expr) (Expr, error) {
	if l.Type().IsArray() || r.Type().IsArray() {
		return arrayConcat(l, r)
	}
	if lt, rt := l.Type(), r.Type(); lt == types.Bytea && (rt == types.Bytea || rt == types.Unknown) ||
		rt == types.Bytea && lt == types.Unknown {
		return byteaConcat(l, r)
	}
	var err error
	if l, err = Cast(l, types.Text); err != nil {
		return nil, err
	}
	if r, err = Cast(r, types.Text); err != nil {
		return nil, err
	}
	return &Func{Name: "||", Infix: true, Args: []Expr{l, r}, T: types.Text, Fn: func(a []types.Datum) (types.Datum, error) {
		if a[0].IsNull() || a[1].IsNull() {
			return types.Null, nil
		}
		return types.NewString(a[0].S + a[1].S), nil
	}}, nil
}

func arith(op string, l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.IsNumeric() && rt.IsNumeric() {
		t := promote(lt, rt)
		if op == "%" && (t == types.Float4 || t == types.Float8) {
			// PostgreSQL has no % (nor mod) for real and double precision.
			return nil, opTypeError(op, lt, rt)
		}
		var err error
		if l, err = Cast(l, t); err != nil {
			return nil, err
		}
		if r, err = Cast(r, t); err != nil {
			return nil, err
		}
		return numericOp(op, l, r, t), nil
	}
	return timeArith(op, l, r)
}

func numericOp(op string, l, r Expr, t types.Type) Expr {
	f := &Func{Name: op, Infix: true, Args: []Expr{l, r}, T: t}
	if t.IsInteger() {
		f.ints = intKernel(op, t)
		return binary(f, intArith(op, t))
	}
	var fn func(a, b types.Datum) (types.Datum, error)
	if t == types.Numeric {
		fn = func(a, b types.Datum) (types.Datum, error) { return decimalOp(op, a.D, b.D) }
	} else {
		fn = func(a, b types.Datum) (types.Datum, error) { return floatOp(op, a.F, b.F, t) }
	}
	return binary(f, func(a, b types.Datum) (types.Datum, error) {
		if a.IsNull() || b.IsNull() {
			return types.Null, nil
		}
		return fn(a, b)
	})
}

// intArith returns the integer operator op over values of type t, NULL
// if either is NULL.
func intArith(op string, t types.Type) func(a, b types.Datum) (types.Datum, error) {
	fn := intKernel(op, t)
	return func(a, b types.Datum) (types.Datum, error) {
		if a.IsNull() || b.IsNull() {
			return types.Null, nil
		}
		return fn(a.I, b.I)
	}
}

// intKernel returns the integer operator op over values of type t that
// are not NULL. Each operator is its own function, with no switch per
// row: integer arithmetic is the group key of many views (k % 10).
func intKernel(op string, t types.Type) func(a, b int64) (types.Datum, error) {
	switch op {
	case "+":
		return func(a, b int64) (types.Datum, error) { return intAdd(a, b, t) }
	case "-":
		return func(a, b int64) (types.Datum, error) { return intSub(a, b, t) }
	case "*":
		return func(a, b int64) (types.Datum, error) { return intMul(a, b, t) }
	case "/":
		return func(a, b int64) (types.Datum, error) { return intDiv(a, b, t) }
	case "%":
		return intMod
	}
	panic("intKernel: operator " + op)
}

func outOfRange(t types.Type) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", t)
}

func divByZero() error { return sqlerr.New(sqlerr.DivisionByZero, "division by zero") }

func intAdd(a, b int64, t types.Type) (types.Datum, error) {
	v := a + b
	if (v > a) != (b > 0) {
		return types.Null, outOfRange(t)
	}
	return intResult(v, t)
}

func intSub(a, b int64, t types.Type) (types.Datum, error) {
	v := a - b
	if (v < a) != (b > 0) {
		return types.Null, outOfRange(t)
	}
	return intResult(v, t)
}

func intMul(a, b int64, t types.Type) (types.Datum, error) {
	hi, lo := bits.Mul64(absU64(a), absU64(b))
	// The magnitude 2^63 fits only as a negative product.
	if hi != 0 || lo > math.MaxInt64+uint64(boolInt((a < 0) != (b < 0))) {
		return types.Null, outOfRange(t)
	}
	return intResult(a*b, t)
}

func intDiv(a, b int64, t types.Type) (types.Datum, error) {
	if b == 0 {
		return types.Null, divByZero()
	}
	if a == math.MinInt64 && b == -1 {
		return types.Null, outOfRange(t)
	}
	return intResult(a/b, t)
}

// intMod is a % b, which is in the range of any type holding a and b:
// its magnitude is below |b|.
func intMod(a, b int64) (types.Datum, error) {
	if b == 0 {
		return types.Null, divByZero()
	}
	if b == -1 {
		return types.NewInt(0), nil
	}
	return types.NewInt(a % b), nil
}

// intResult is v as a value of integer type t, or 22003 if it does not fit.
func intResult(v int64, t types.Type) (types.Datum, error) {
	d, err := types.CheckIntRange(v, t)
	if err != nil {
		return types.Null, outOfRange(t)
	}
	return d, nil
}

// absU64 is |a|, also of math.MinInt64.
func absU64(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // -MinInt64 wraps to itself: 1<<63 as unsigned
	}
	return uint64(a)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func floatOp(op string, a, b float64, t types.Type) (types.Datum, error) {
	var v float64
	switch op {
	case "+":
		v = a + b
	case "-":
		v = a - b
	case "*":
		v = a * b
	case "/":
		if b == 0 && !math.IsNaN(a) { // PostgreSQL: NaN / 0 is NaN
			return types.Null, divByZero()
		}
		v = a / b
	}
	if t == types.Float4 {
		v = float64(float32(v))
	}
	// PostgreSQL's check_float8_val: an infinite result of finite inputs
	// overflowed, a zero result of nonzero inputs underflowed.
	if math.IsInf(v, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		return types.Null, floatRangeErr(v)
	}
	if v == 0 && (op == "*" || op == "/") && a != 0 && !math.IsInf(b, 0) && (op == "/" || b != 0) {
		return types.Null, floatRangeErr(v)
	}
	return types.NewFloat(v), nil
}

// decimalOp is a numeric operator: +, - and * are exact, / has
// PostgreSQL's result scale, and NaN and the infinities follow
// PostgreSQL's rules.
func decimalOp(op string, a, b *apd.Decimal) (types.Datum, error) {
	if d, ok := specialDecimalOp(op, a, b); ok {
		return d, nil
	}
	var out apd.Decimal
	var err error
	switch op {
	case "+":
		_, err = exactCtx.Add(&out, a, b)
	case "-":
		_, err = exactCtx.Sub(&out, a, b)
	case "*":
		_, err = exactCtx.Mul(&out, a, b)
		// PostgreSQL's product has the sum of the operands' scales, also
		// where apd's exponent is larger (1e100 * 0.5 is ...000.0, and
		// 1e100 * 0.000 is 0.000).
		if target := -(dscale(a) + dscale(b)); err == nil && out.Exponent > target {
			if out.IsZero() {
				out.Exponent = target
			} else {
				c := exactCtx
				c.Precision = uint32(int64(out.NumDigits()) + int64(out.Exponent-target))
				_, err = c.Quantize(&out, &out, target)
			}
		}
	case "/":
		if b.IsZero() {
			return types.Null, divByZero()
		}
		return DivDecimal(a, b), nil
	case "%":
		if b.IsZero() {
			return types.Null, divByZero()
		}
		// The integer quotient and the remainder (which keeps every
		// digit of the finer scale) must both fit the context's precision.
		c := exactCtx
		spread := int64(a.Exponent) - int64(b.Exponent)
		if spread < 0 {
			spread = -spread
		}
		c.Precision = uint32(max(40, int64(a.NumDigits())+int64(b.NumDigits())+spread+2))
		_, err = c.Rem(&out, a, b)
	}
	if err != nil {
		return types.Null, types.ErrNumericOverflow() // apd's exponent limits
	}
	if err := types.CheckNumeric(&out); err != nil {
		return types.Null, err
	}
	return types.NewDecimal(NormalizeZero(&out)), nil
}

// DivDecimal divides like PostgreSQL's numeric division (select_div_scale):
// the result has about 16 significant digits, counted in PostgreSQL's
// base-10000 digit groups, and at least the scale of either input.
func DivDecimal(a, b *apd.Decimal) types.Datum {
	wa, fa := nbaseWeight(a)
	wb, fb := nbaseWeight(b)
	qweight := wa - wb
	if fa <= fb {
		qweight--
	}
	scale := 16 - qweight*4
	scale = max(scale, dscale(a), dscale(b), 0)
	scale = min(scale, 1000)
	var q apd.Decimal
	// Enough digits for the quotient's integer part and the scale.
	c := decCtx.WithPrecision(uint32(max(40, scale+40+4*max(qweight, 0))))
	c.Rounding = apd.RoundHalfUp
	c.Quo(&q, a, b)
	var r apd.Decimal
	c.Quantize(&r, &q, -scale)
	return types.NewDecimal(NormalizeZero(&r))
}

// dscale is the number of digits after the decimal point.
func dscale(d *apd.Decimal) int32 { return max(0, -d.Exponent) }

// nbaseWeight returns the weight and leading digit of d in base 10000, as
// PostgreSQL stores numerics (value ~ first * 10000^weight).
func nbaseWeight(d *apd.Decimal) (weight int32, first int64) {
	if d.IsZero() {
		return 0, 0
	}
	digits := d.Coeff.String()
	msd := int32(len(digits)) + d.Exponent - 1 // 10^msd <= |d|
	weight = msd / 4
	if msd < 0 && msd%4 != 0 {
		weight--
	}
	// The leading group holds the digits from msd down to weight*4.
	n := int(msd - weight*4 + 1)
	lead := digits
	if len(lead) > n {
		lead = lead[:n]
	}
	for len(lead) < n {
		lead += "0"
	}
	first, _ = strconv.ParseInt(lead, 10, 64)
	return weight, first
}

// Negate builds unary minus. Floats flip their sign bit (so -(0.0) is -0,
// as in PostgreSQL); integers check for overflow.
func Negate(e Expr) (Expr, error) {
	t := e.Type()
	if t == types.Unknown {
		var err error
		if e, err = Cast(e, types.Numeric); err != nil {
			return nil, err
		}
		t = types.Numeric
	}
	if t == types.Time { // - time is - interval, PostgreSQL's implicit cast
		var err error
		if e, err = Cast(e, types.Interval); err != nil {
			return nil, err
		}
		t = types.Interval
	}
	if !t.IsNumeric() && t != types.Interval {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: - %s", t)
	}
	return &Func{Name: "-", Infix: true, Args: []Expr{e}, T: t, Fn: func(a []types.Datum) (types.Datum, error) {
		d := a[0]
		switch d.K {
		case types.KindNull:
			return d, nil
		case types.KindInt:
			return intSub(0, d.I, t)
		case types.KindFloat:
			return types.NewFloat(-d.F), nil
		case types.KindDecimal:
			if d.D.Form == apd.NaN || d.D.Form == apd.NaNSignaling {
				return d, nil // NaN has no sign
			}
			var out apd.Decimal
			out.Neg(d.D)
			return types.NewDecimal(NormalizeZero(&out)), nil
		case types.KindInterval:
			if d.Months == math.MinInt32 || d.Days == math.MinInt32 || d.I == math.MinInt64 {
				return types.Null, types.ErrIntervalRange()
			}
			return types.NewInterval(-d.Months, -d.Days, -d.I), nil
		}
		return types.Null, opTypeError("-", types.Unknown, t)
	}}, nil
}

// NormalizeZero drops the sign of a decimal zero: PostgreSQL has no
// negative numeric zero.
func NormalizeZero(d *apd.Decimal) *apd.Decimal {
	if d.IsZero() {
		d.Negative = false
	}
	return d
}
