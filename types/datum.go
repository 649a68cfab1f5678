package types

import (
	"cmp"
	"math"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
)

// Kind says which field of a Datum holds the value. Several SQL types share a
// kind (all integers are KindInt); the column's Type says which one it is.
type Kind uint8

const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindDecimal
	KindString
	KindDate      // I: days since 1970-01-01
	KindTimestamp // I: microseconds since 2000-01-01 00:00:00 UTC (datetime.go)
	KindInterval  // Months, Days, I (microseconds)
	KindBytes     // S: the raw bytes of a bytea
	KindTime      // I: microseconds since midnight (timeofday.go)
	KindTimeTZ    // I: microseconds since midnight, Days: zone in seconds west of UTC
	KindUUID      // S: the 16 bytes of a uuid (uuid.go)
	KindJSON      // S: json text as given (json.go)
	KindJSONB     // S: canonical jsonb text (json.go)
)

// Datum is one SQL value. It is a small value type: copy it freely, never
// mutate D (decimals are shared).
type Datum struct {
	K      Kind
	Months int32
	Days   int32
	I      int64
	F      float64
	S      string
	D      *apd.Decimal
}

// Null is the SQL NULL.
var Null = Datum{}

func NewBool(b bool) Datum {
	if b {
		return Datum{K: KindBool, I: 1}
	}
	return Datum{K: KindBool}
}
func NewInt(i int64) Datum            { return Datum{K: KindInt, I: i} }
func NewFloat(f float64) Datum        { return Datum{K: KindFloat, F: f} }
func NewString(s string) Datum        { return Datum{K: KindString, S: s} }
func NewDecimal(d *apd.Decimal) Datum { return Datum{K: KindDecimal, D: d} }
func NewDate(days int64) Datum        { return Datum{K: KindDate, I: days} }
func NewTime(t time.Time) Datum       { return Datum{K: KindTimestamp, I: MicrosOfTime(t)} }
func NewInterval(months, days int32, micros int64) Datum {
	return Datum{K: KindInterval, Months: months, Days: days, I: micros}
}

// NewTimestamp2000 is a timestamp of us microseconds since 2000-01-01
// 00:00:00 UTC (PostgreSQL's epoch; FromUnixMicros converts from 1970's).
func NewTimestamp2000(us int64) Datum { return Datum{K: KindTimestamp, I: us} }

// IsNull reports whether d is NULL.
func (d Datum) IsNull() bool { return d.K == KindNull }

// Bool returns the value of a KindBool datum.
func (d Datum) Bool() bool { return d.I != 0 }

// Time returns a KindTimestamp datum as a UTC time.
func (d Datum) Time() time.Time { return TimeOfMicros(d.I) }

// IntervalSpan is the length of an interval datum as PostgreSQL compares
// intervals (interval_cmp_value: a month is 30 days, a day 24 hours), in
// whole days and the microseconds left, 0 <= micros < UsecsPerDay: equal
// spans are equal intervals ('1 day' = '24:00:00', '1 mon' = '30 days'),
// and (days, micros) in lexicographic order is PostgreSQL's order. The
// span needs 128 bits as microseconds; days and the rest need no more
// than int64 each.
func (d Datum) IntervalSpan() (days, micros int64) {
	days = int64(d.Months)*30 + int64(d.Days)
	q, r := d.I/UsecsPerDay, d.I%UsecsPerDay
	if r < 0 {
		q, r = q-1, r+UsecsPerDay
	}
	return days + q, r
}

// compareIntervals orders two interval datums by their spans.
func compareIntervals(a, b Datum) int {
	ad, au := a.IntervalSpan()
	bd, bu := b.IntervalSpan()
	return cmp.Or(cmp.Compare(ad, bd), cmp.Compare(au, bu))
}

// Float returns any numeric datum as float64.
func (d Datum) Float() float64 {
	switch d.K {
	case KindInt:
		return float64(d.I)
	case KindFloat:
		return d.F
	case KindDecimal:
		f, _ := d.D.Float64()
		return f
	}
	return 0
}

// Decimal returns any exact numeric datum as a decimal.
func (d Datum) Decimal() *apd.Decimal {
	switch d.K {
	case KindDecimal:
		return d.D
	case KindInt:
		return apd.New(d.I, 0)
	case KindFloat:
		var x apd.Decimal
		x.SetFloat64(d.F)
		return &x
	}
	return apd.New(0, 0)
}

// Compare orders two datums of comparable kinds. NULL sorts after every
// value (PostgreSQL's default for ascending order). Integers, floats and
// decimals compare numerically with each other.
func Compare(a, b Datum) int {
	if a.K == KindNull || b.K == KindNull {
		switch {
		case a.K == b.K:
			return 0
		case a.K == KindNull:
			return 1
		default:
			return -1
		}
	}
	if a.K != b.K {
		if isNumberKind(a.K) && isNumberKind(b.K) {
			if a.K == KindFloat || b.K == KindFloat {
				return compareFloat(a.Float(), b.Float())
			}
			return compareDecimal(a.Decimal(), b.Decimal())
		}
		return cmp.Compare(a.K, b.K)
	}
	switch a.K {
	case KindBool, KindInt, KindDate, KindTimestamp, KindTime:
		return cmp.Compare(a.I, b.I)
	case KindFloat:
		return compareFloat(a.F, b.F)
	case KindDecimal:
		return compareDecimal(a.D, b.D)
	case KindString, KindBytes, KindUUID:
		return strings.Compare(a.S, b.S)
	case KindInterval:
		return compareIntervals(a, b)
	case KindTimeTZ:
		return CompareTimeTZ(a, b)
	case KindJSON:
		return strings.Compare(a.S, b.S)
	case KindJSONB:
		return CompareJSONBText(a.S, b.S)
	}
	return 0
}

func isNumberKind(k Kind) bool { return k == KindInt || k == KindFloat || k == KindDecimal }

// compareFloat orders NaN above every other value, as PostgreSQL does.
func compareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// compareDecimal orders numeric NaN above every other value, +Infinity
// included, and equal to itself, as PostgreSQL does.
func compareDecimal(a, b *apd.Decimal) int {
	an, bn := a.Form == apd.NaN || a.Form == apd.NaNSignaling, b.Form == apd.NaN || b.Form == apd.NaNSignaling
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return a.Cmp(b)
}

// Row is one tuple of values, in the column order of its schema.
type Row []Datum

// Column names and types one column of a schema.
type Column struct {
	Name string
	Type Type
	Mod  Modifier // declared size, if any
}
