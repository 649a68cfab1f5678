package types

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"streamdb/sqlerr"
)

// ErrIntervalRange is PostgreSQL's error for interval arithmetic that
// leaves the type's range (months and days are int32, the time part int64
// microseconds).
func ErrIntervalRange() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
}

// IntervalFromParts returns an interval datum, or 22008 if a part does not
// fit its field.
func IntervalFromParts(months, days int64, micros *big.Int) (Datum, error) {
	if months < math.MinInt32 || months > math.MaxInt32 || days < math.MinInt32 || days > math.MaxInt32 || !micros.IsInt64() {
		return Null, ErrIntervalRange()
	}
	return NewInterval(int32(months), int32(days), micros.Int64()), nil
}

// formatInterval prints an interval as PostgreSQL does (IntervalStyle
// postgres): a field after a negative one carries an explicit "+" when
// positive.
func formatInterval(d Datum) string {
	var parts []string
	negBefore := false
	field := func(n int64, unit string) {
		if n == 0 {
			return
		}
		sign := ""
		if negBefore && n > 0 {
			sign = "+"
		}
		s := fmt.Sprintf("%s%d %s", sign, n, unit)
		if n != 1 {
			s += "s"
		}
		parts = append(parts, s)
		negBefore = n < 0
	}
	field(int64(d.Months/12), "year")
	field(int64(d.Months%12), "mon")
	field(int64(d.Days), "day")
	if d.I != 0 || len(parts) == 0 {
		us := uint64(d.I)
		sign := ""
		switch {
		case d.I < 0:
			sign = "-"
			us = -us // two's complement: the magnitude, also of math.MinInt64
		case negBefore:
			sign = "+"
		}
		h := us / 3600e6
		m := us / 60e6 % 60
		s := us / 1e6 % 60
		frac := us % 1e6
		clock := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
		if frac != 0 {
			clock += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		parts = append(parts, clock)
	}
	return strings.Join(parts, " ")
}

// intervalUnits maps each unit spelling (singular; a trailing "s" is
// dropped first) to months, days or microseconds per unit.
var intervalUnits = map[string]struct {
	months, days int64
	micros       int64
}{
	"microsecond": {0, 0, 1}, "usec": {0, 0, 1}, "us": {0, 0, 1},
	"millisecond": {0, 0, 1000}, "msec": {0, 0, 1000}, "m": {0, 0, 60e6}, "ms": {0, 0, 1000},
	"second": {0, 0, 1e6}, "sec": {0, 0, 1e6}, "s": {0, 0, 1e6},
	"minute": {0, 0, 60e6}, "min": {0, 0, 60e6},
	"hour": {0, 0, 3600e6}, "hr": {0, 0, 3600e6}, "h": {0, 0, 3600e6},
	"day": {0, 1, 0}, "d": {0, 1, 0},
	"week": {0, 7, 0}, "w": {0, 7, 0},
	"month": {1, 0, 0}, "mon": {1, 0, 0},
	"year": {12, 0, 0}, "yr": {12, 0, 0}, "y": {12, 0, 0},
	"decade": {120, 0, 0}, "century": {1200, 0, 0}, "centurie": {1200, 0, 0},
	"millennium": {12000, 0, 0}, "millennia": {12000, 0, 0},
}

var (
	bigDayMicros = big.NewRat(86400e6, 1)
	ratThirty    = big.NewRat(30, 1)
)

// parseIntervalOutput reads the interval text formatInterval prints
// (exactly, with fractions spilling into days and microseconds). It lets
// ParseInterval read back values whose text PostgreSQL itself would refuse.
func parseIntervalOutput(s string) (Datum, error) {
	fields := strings.Fields(strings.ToLower(s))
	bad := func() (Datum, error) {
		return Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type interval: %q", s)
	}
	overflow := func() (Datum, error) {
		return Null, sqlerr.New(sqlerr.IntervalFieldOverflow, "interval field value out of range: %q", s)
	}
	if len(fields) > 0 && fields[0] == "@" {
		fields = fields[1:]
	}
	ago := false
	if len(fields) > 0 && fields[len(fields)-1] == "ago" {
		ago, fields = true, fields[:len(fields)-1]
	}
	if len(fields) == 0 {
		return bad()
	}
	months, days, micros := new(big.Int), new(big.Int), new(big.Int)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			us, ok := parseClock(f)
			if !ok {
				return bad()
			}
			micros.Add(micros, us)
			continue
		}
		n, ok := parseDecimalRat(f)
		if !ok {
			return bad()
		}
		unit := "s" // a bare number is seconds
		if i+1 < len(fields) {
			i++
			unit = fields[i]
			if _, known := intervalUnits[unit]; !known {
				unit = strings.TrimSuffix(unit, "s")
			}
		}
		u, known := intervalUnits[unit]
		if !known {
			return bad()
		}
		switch {
		case u.months == 12 || u.months > 12:
			// Years and longer: fractional months round (PostgreSQL).
			m := new(big.Rat).Mul(n, big.NewRat(u.months, 1))
			months.Add(months, roundRat(m))
		case u.months == 1:
			whole := truncRat(n)
			months.Add(months, whole)
			frac := new(big.Rat).Sub(n, new(big.Rat).SetInt(whole))
			addDays(days, micros, frac.Mul(frac, ratThirty))
		case u.days > 0:
			addDays(days, micros, new(big.Rat).Mul(n, big.NewRat(u.days, 1)))
		default:
			micros.Add(micros, roundRat(new(big.Rat).Mul(n, big.NewRat(u.micros, 1))))
		}
	}
	if ago {
		months.Neg(months)
		days.Neg(days)
		micros.Neg(micros)
	}
	if !months.IsInt64() || !days.IsInt64() {
		return overflow()
	}
	d, err := IntervalFromParts(months.Int64(), days.Int64(), micros)
	if err != nil {
		return overflow()
	}
	return d, nil
}

// addDays adds a (possibly fractional) number of days: the whole days to
// days, the rest as microseconds.
func addDays(days, micros *big.Int, n *big.Rat) {
	whole := truncRat(n)
	days.Add(days, whole)
	frac := new(big.Rat).Sub(n, new(big.Rat).SetInt(whole))
	micros.Add(micros, roundRat(frac.Mul(frac, bigDayMicros)))
}

// truncRat returns r rounded toward zero.
func truncRat(r *big.Rat) *big.Int {
	return new(big.Int).Quo(r.Num(), r.Denom())
}

// roundRat returns r rounded to the nearest integer, halves away from zero.
func roundRat(r *big.Rat) *big.Int {
	num := new(big.Int).Mul(r.Num(), big.NewInt(2))
	if r.Sign() >= 0 {
		num.Add(num, r.Denom())
	} else {
		num.Sub(num, r.Denom())
	}
	return num.Quo(num, new(big.Int).Mul(r.Denom(), big.NewInt(2)))
}

// parseDecimalRat reads [+-]digits[.digits] (no exponent) exactly.
func parseDecimalRat(f string) (*big.Rat, bool) {
	if f == "" || len(f) > 400 {
		return nil, false
	}
	body := strings.TrimLeft(f, "+-")
	if len(f)-len(body) > 1 || body == "" || body == "." {
		return nil, false
	}
	for _, c := range body {
		if (c < '0' || c > '9') && c != '.' {
			return nil, false
		}
	}
	if strings.Count(body, ".") > 1 {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(f)
	return r, ok
}

// parseClock reads [-]H:MM[:SS[.ffffff]] (hours of any size) exactly, in
// microseconds.
func parseClock(s string) (*big.Int, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, false
	}
	total := new(big.Rat)
	mult := []int64{3600e6, 60e6, 1e6}
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, "+-") || (i < len(parts)-1 && strings.Contains(p, ".")) {
			return nil, false
		}
		if i > 0 {
			if n, err := strconv.ParseFloat(p, 64); err != nil || n >= 60 {
				return nil, false
			}
		}
		v, ok := parseDecimalRat(p)
		if !ok {
			return nil, false
		}
		total.Add(total, v.Mul(v, big.NewRat(mult[i], 1)))
	}
	us := roundRat(total)
	if neg {
		us.Neg(us)
	}
	return us, true
}
