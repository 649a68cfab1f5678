package types

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
)

// NUMERIC's limits: PostgreSQL's 16383 digits after the decimal point,
// and 100000 before it (PostgreSQL allows 131072, but the decimal library,
// apd, reads no exponent past 100000, so a longer value could not be read
// back).
const (
	NumericMaxIntegerDigits = 100000
	NumericMaxScale         = 16383
)

// ErrNumericOverflow is PostgreSQL's error for a NUMERIC past its limits.
func ErrNumericOverflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
}

// CheckNumeric returns 22003 if d is a finite decimal past NUMERIC's
// limits. NaN and the infinities are NUMERIC values (PostgreSQL 14+);
// signalling NaN is not.
func CheckNumeric(d *apd.Decimal) error {
	switch d.Form {
	case apd.NaNSignaling:
		return ErrNumericOverflow()
	case apd.NaN, apd.Infinite:
		return nil
	}
	if d.IsZero() {
		return nil
	}
	// Digits before the point: coefficient digits + exponent.
	if int64(d.NumDigits())+int64(d.Exponent) > NumericMaxIntegerDigits || -int64(d.Exponent) > NumericMaxScale {
		return ErrNumericOverflow()
	}
	return nil
}

// ParseNumeric reads NUMERIC text as PostgreSQL's numeric_in does: a
// decimal with an optional exponent, NaN, or [+-]Infinity / inf (any case).
// Negative zero is zero.
func ParseNumeric(s string) (Datum, error) {
	v := strings.TrimSpace(s)
	switch strings.ToLower(v) {
	case "nan":
		return NewDecimal(&apd.Decimal{Form: apd.NaN}), nil
	case "infinity", "+infinity", "inf", "+inf":
		return NewDecimal(&apd.Decimal{Form: apd.Infinite}), nil
	case "-infinity", "-inf":
		return NewDecimal(&apd.Decimal{Form: apd.Infinite, Negative: true}), nil
	}
	bad := func() (Datum, error) {
		return Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", s)
	}
	if v == "" || !isDecimalText(v) {
		return bad()
	}
	d, _, err := apd.NewFromString(v)
	if err != nil {
		return Null, ErrNumericOverflow() // the syntax is valid: apd's exponent limit
	}
	if d.Form != apd.Finite {
		return bad()
	}
	if d.IsZero() {
		// No negative zero, and no negative scale: 0E5 is 0, as in
		// PostgreSQL (apd would print it as 000000).
		d.Negative = false
		d.Exponent = min(d.Exponent, 0)
	}
	if err := CheckNumeric(d); err != nil {
		return Null, err
	}
	return NewDecimal(d), nil
}

// isDecimalText reports whether v is [+-]digits[.digits][e[+-]digits] with
// at least one digit in the mantissa (apd also reads forms PostgreSQL does
// not, such as "sNaN").
func isDecimalText(v string) bool {
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	n := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i, n = i+1, n+1
	}
	if i < len(v) && v[i] == '.' {
		i++
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i, n = i+1, n+1
		}
	}
	if n == 0 {
		return false
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		m := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i, m = i+1, m+1
		}
		if m == 0 {
			return false
		}
	}
	return i == len(v)
}

// parseInt reads integer text for an integer type.
func parseInt(s string, t Type) (Datum, error) {
	v := strings.TrimSpace(s)
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "value %q is out of range for type %s", v, t)
		}
		return Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", t, s)
	}
	if _, err := CheckIntRange(i, t); err != nil {
		return Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "value %q is out of range for type %s", v, t)
	}
	return NewInt(i), nil
}

// parseFloat reads REAL and DOUBLE PRECISION text as PostgreSQL's float4in
// and float8in do: NaN and [+-]Infinity / inf in any case; a value too
// large for the type, or too small to be anything but zero, is 22003.
func parseFloat(s string, t Type) (Datum, error) {
	v := strings.TrimSpace(s)
	bits := 64
	if t == Float4 {
		bits = 32
	}
	switch strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(v, "+"), "-")) {
	case "nan":
		return NewFloat(math.NaN()), nil
	case "infinity", "inf":
		if strings.HasPrefix(v, "-") {
			return NewFloat(math.Inf(-1)), nil
		}
		return NewFloat(math.Inf(1)), nil
	}
	outOfRange := func() (Datum, error) {
		return Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "%q is out of range for type %s", v, t)
	}
	if strings.ContainsRune(v, '_') {
		return Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", t, s)
	}
	f, err := strconv.ParseFloat(v, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return outOfRange()
		}
		return Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", t, s)
	}
	if f == 0 && nonzeroMantissa(v) {
		return outOfRange()
	}
	return NewFloat(f), nil
}

// nonzeroMantissa reports whether decimal float text has a nonzero digit
// before its exponent.
func nonzeroMantissa(v string) bool {
	lv := strings.ToLower(v)
	if strings.Contains(lv, "0x") {
		if e := strings.IndexByte(lv, 'p'); e >= 0 {
			lv = lv[:e]
		}
		return strings.ContainsAny(strings.TrimPrefix(strings.TrimLeft(lv, "+-"), "0x"), "123456789abcdef")
	}
	if e := strings.IndexByte(lv, 'e'); e >= 0 {
		lv = lv[:e]
	}
	return strings.ContainsAny(lv, "123456789")
}
