package front

import (
	"strconv"
	"strings"
)

// maxParserDigits is the longest number literal, in digits, handed to the
// TiDB parser as a number: its decimal type holds 65 digits and it panics
// on some longer literals. PostgreSQL reads any length (as numeric).
const maxParserDigits = 60

// longNumberPass rewrites the number literals the TiDB parser would read
// wrongly into what PostgreSQL makes of them (a literal with a point, an
// exponent or past bigint is numeric). The parser reads a literal with an
// exponent as a double, which loses digits past the 17th, the scale
// (1.500e-3 is 0.001500) and values past double's range (1e-400 would be
// 0, 1e400 an error): such a literal becomes the same number without its
// exponent (0.001500), which the parser reads exactly as a decimal. An
// integer of up to 15 digits (1e5) stays as it is: as a double it is
// exact. A literal still longer than maxParserDigits digits becomes
// streamdb_cast('literal', 'numeric'); its column is named "numeric"
// where PostgreSQL says "?column?".
func (r *rewriter) longNumberPass() error {
	var out []token // nil until a literal is rewritten
	for i, t := range r.toks {
		var with []token
		if t.kind == tkNumber {
			with = numberForParser(t)
		}
		if with == nil {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]token, 0, len(r.toks)+5), r.toks[:i]...)
		}
		out = append(out, with...)
	}
	if out != nil {
		r.toks = out
	}
	return nil
}

// numberForParser is the tokens the number literal t is handed to the
// parser as, or nil to hand it over as it is.
func numberForParser(t token) []token {
	lit := t.val
	e := strings.IndexAny(lit, "eE")
	switch {
	case strings.HasPrefix(lit, "0x") || strings.HasPrefix(lit, "0X"):
		return nil
	case e < 0:
		if countDigits(lit) > maxParserDigits {
			return castToNumeric(t)
		}
		return nil
	}
	exp, err := strconv.Atoi(lit[e+1:])
	if err != nil {
		return castToNumeric(t) // numeric's input says what is wrong
	}
	plain, ok := withoutExponent(lit)
	if ok && !strings.HasSuffix(plain, ".") && countDigits(plain) <= maxParserDigits {
		return []token{synth(tkNumber, plain, t, t.space)}
	}
	// An integer (a trailing point the parser does not read everywhere)
	// of up to 15 digits is exact as a double: the parser reads it right.
	integer := ok && strings.HasSuffix(plain, ".") || !ok && exp > 0
	if integer && exactInDouble(lit) {
		return nil
	}
	return castToNumeric(t)
}

// castToNumeric is streamdb_cast('literal', 'numeric') of the number t.
func castToNumeric(t token) []token {
	return []token{synth(tkWord, CastFunc, t, t.space), synth(tkOp, "(", t, false),
		synth(tkString, t.val, t, false), synth(tkOp, ",", t, false),
		synth(tkString, "numeric", t, true), synth(tkOp, ")", t, false)}
}

// exactInDouble reports whether the literal lit with an exponent, whose
// value is an integer, has at most 15 significant digits and lies in
// double precision's range.
func exactInDouble(lit string) bool {
	mant := lit[:strings.IndexAny(lit, "eE")]
	if countDigits(strings.TrimLeft(strings.Replace(mant, ".", "", 1), "0")) > 15 {
		return false
	}
	_, err := strconv.ParseFloat(lit, 64)
	return err == nil
}

func countDigits(lit string) int {
	digits := 0
	for _, c := range lit {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return digits
}

// maxShift bounds the exponent written out as digits; a literal with a
// larger one is longer than maxParserDigits either way.
const maxShift = 2 * maxParserDigits

// withoutExponent writes the decimal literal lit (digits, an optional
// point and digits, an exponent) without its exponent, keeping
// PostgreSQL's scale: the digits after the point less the exponent, and
// never below 0. An integer keeps a trailing point so that it stays
// numeric. ok is false for a literal without an exponent, one whose
// exponent is too large to write out, and one that is not decimal (0x1f).
func withoutExponent(lit string) (string, bool) {
	e := strings.IndexAny(lit, "eE")
	if e < 0 {
		return "", false
	}
	exp, err := strconv.Atoi(lit[e+1:])
	if err != nil || exp > maxShift || exp < -maxShift {
		return "", false
	}
	mant := lit[:e]
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart+frac == "" || strings.Trim(intPart+frac, "0123456789") != "" {
		return "", false
	}
	digits := intPart + frac
	point := len(intPart) + exp // digits before the point
	if point < 0 {
		digits = strings.Repeat("0", -point) + digits
		point = 0
	}
	if point > len(digits) {
		digits += strings.Repeat("0", point-len(digits))
	}
	whole := strings.TrimLeft(digits[:point], "0")
	if whole == "" {
		whole = "0"
	}
	if point == len(digits) {
		return whole + ".", true
	}
	return whole + "." + digits[point:], true
}
