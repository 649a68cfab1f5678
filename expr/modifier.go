package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// ApplyModifier fits a value to a declared size. An explicit cast
// truncates an over-long string; an assignment (INSERT, a stream's input)
// refuses it with 22001. Numerics round to the scale and must fit the
// precision (22003).
func ApplyModifier(d types.Datum, m types.Modifier, explicit bool) (types.Datum, error) {
	if d.IsNull() || m.IsZero() {
		return d, nil
	}
	switch {
	case m.Fixed && d.K == types.KindString:
		return fitFixed(d.S, m, explicit)
	case m.Length > 0 && d.K == types.KindString:
		if utf8.RuneCountInString(d.S) <= m.Length {
			return d, nil
		}
		if !explicit {
			// PostgreSQL forgives trailing spaces beyond the length.
			r := []rune(d.S)
			if strings.TrimRight(string(r[m.Length:]), " ") != "" {
				return types.Null, sqlerr.New(sqlerr.StringDataRightTruncation, "value too long for type character varying(%d)", m.Length)
			}
		}
		return types.NewString(string([]rune(d.S)[:m.Length])), nil
	case m.Precision > 0 && d.K == types.KindDecimal:
		switch d.D.Form {
		case apd.NaN:
			return d, nil
		case apd.Infinite:
			return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
				WithHint("A field with precision %d, scale %d cannot hold an infinite value.", m.Precision, m.Scale)
		}
		overflow := func() error {
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
				WithHint("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", m.Precision, m.Scale, m.Precision-m.Scale)
		}
		// Rounding never shrinks the integer digits: a value with too
		// many overflows before it is rounded (and would not fit the
		// rounding context).
		if !d.D.IsZero() && int64(d.D.NumDigits())+int64(d.D.Exponent) > int64(m.Precision-m.Scale) {
			return types.Null, overflow()
		}
		var r apd.Decimal
		c := decCtx.WithPrecision(uint32(m.Precision + 40))
		c.Rounding = apd.RoundHalfUp
		if _, err := c.Quantize(&r, d.D, -int32(m.Scale)); err != nil {
			return types.Null, err
		}
		if int(r.NumDigits())+int(r.Exponent) > m.Precision-m.Scale && !r.IsZero() {
			return types.Null, overflow()
		}
		return types.NewDecimal(NormalizeZero(&r)), nil
	case m.HasTimePrecision && (d.K == types.KindTime || d.K == types.KindTimeTZ):
		d.I = types.RoundTime(d.I, m.TimePrecision)
		return d, nil
	case m.HasTimePrecision && d.K == types.KindTimestamp:
		if !types.TimestampFinite(d.I) {
			return d, nil
		}
		// As PostgreSQL, rounding up the last microseconds of the range
		// may reach the year 294277 without an error.
		d.I = types.RoundTime(d.I, m.TimePrecision)
		return d, nil
	}
	return d, nil
}

// CastWithModifier is Cast followed by fitting to m.
func CastWithModifier(e Expr, t types.Type, m types.Modifier, explicit bool) (Expr, error) {
	c, err := Cast(e, t)
	if err != nil || m.IsZero() {
		return c, err
	}
	if k, ok := c.(*Const); ok {
		v, err := ApplyModifier(k.D, m, explicit)
		if err != nil {
			return nil, err
		}
		return &Const{D: v, T: t, Mod: m}, nil
	}
	return unary(&Func{Name: "CAST" + m.Suffix(), Args: []Expr{c}, T: t, Mod: m}, func(a types.Datum) (types.Datum, error) {
		return ApplyModifier(a, m, explicit)
	}), nil
}

// fitFixed fits a string to character(n): trailing spaces are dropped
// (they are insignificant to character(n), which pads on output), and a
// longer value is refused with 22001 on assignment or cut on an explicit
// cast, as PostgreSQL's bpchar does.
func fitFixed(s string, m types.Modifier, explicit bool) (types.Datum, error) {
	s = strings.TrimRight(s, " ")
	if utf8.RuneCountInString(s) > m.Length {
		if !explicit {
			return types.Null, sqlerr.New(sqlerr.StringDataRightTruncation, "value too long for type character(%d)", m.Length)
		}
		s = strings.TrimRight(string([]rune(s)[:m.Length]), " ")
	}
	return types.NewString(s), nil
}

// Modifier returns the declared size e's values carry: that of a cast to
// a type with a modifier, or none.
func Modifier(e Expr) types.Modifier {
	switch e := e.(type) {
	case *Func:
		return e.Mod
	case *Const:
		return e.Mod
	}
	return types.Modifier{}
}
