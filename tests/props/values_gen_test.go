package props

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// colType is one column type the value test writes: its declaration, the
// edge values every run tries, and a generator of random values. Values are
// SQL expressions: untyped literals (assigned to the column as PostgreSQL
// does), typed literals, and arithmetic that lands on a boundary.
type colType struct {
	key    string // names the test's relations: t_<key>, s_<key>, ...
	decl   string
	minmax bool // min and max are defined (not for boolean)
	edges  []string
	random func(r *rand.Rand) string
}

// lit quotes s as an SQL string literal.
func lit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// escLit quotes s as an E” literal with every control character escaped,
// so that statements stay printable in reports.
func escLit(s string) string {
	var b strings.Builder
	b.WriteString("E'")
	for _, r := range s {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// randInt returns an integer of up to bits bits, biased to small and
// boundary magnitudes.
func randInt(r *rand.Rand, bits uint) int64 {
	switch r.IntN(4) {
	case 0:
		return int64(r.IntN(201)) - 100
	case 1:
		lim := int64(1)<<(bits-1) - 1
		return pick(r, lim, -lim-1, lim-1, -lim)
	}
	v := int64(r.Uint64() >> (65 - bits))
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// randDigits returns n random decimal digits.
func randDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// randDecimal returns a decimal literal with up to intDigits digits before
// the point and fracDigits after it.
func randDecimal(r *rand.Rand, intDigits, fracDigits int) string {
	s := strings.TrimLeft(randDigits(r, 1+r.IntN(intDigits)), "0")
	if s == "" {
		s = "0"
	}
	if f := r.IntN(fracDigits + 1); f > 0 {
		s += "." + randDigits(r, f)
	}
	if r.IntN(3) == 0 {
		s = "-" + s
	}
	return s
}

// randFloat returns a float64 spread over the whole exponent range.
func randFloat(r *rand.Rand) float64 {
	switch r.IntN(3) {
	case 0:
		return math.Float64frombits(r.Uint64())
	case 1:
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
	}
	return float64(r.IntN(2001)-1000) / 8
}

// randTime returns a time between years 1 and 9999 (and sometimes beyond
// 9999), with microseconds.
func randTime(r *rand.Rand) time.Time {
	lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(10100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	if r.IntN(2) == 0 {
		lo, hi = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
	sec := lo + r.Int64N(hi-lo)
	return time.Unix(sec, int64(r.IntN(1000000))*1000).UTC()
}

// pgTimestamp formats t as PostgreSQL reads it, with BC for years <= 0.
func pgTimestamp(t time.Time, frac bool) string {
	y, bc := t.Year(), ""
	if y <= 0 {
		y, bc = 1-y, " BC"
	}
	s := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", y, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second())
	if frac {
		s += fmt.Sprintf(".%06d", t.Nanosecond()/1000)
	}
	return s + bc
}

// randTimeOfDay returns a time of day as time input, with microseconds
// (sometimes 24:00:00).
func randTimeOfDay(r *rand.Rand) string {
	if r.IntN(50) == 0 {
		return "24:00:00"
	}
	return fmt.Sprintf("%02d:%02d:%02d.%06d", r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000000))
}

// randZone returns a zone offset as time with time zone input.
func randZone(r *rand.Rand) string {
	return pick(r, "+00", "-05", "+05:30", "+14", "-12:45", "+15:59", "-03:30:15", " UTC", " PST")
}

func randInterval(r *rand.Rand) string {
	var parts []string
	if r.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("%d years", randInt(r, 20)%178956970))
	}
	if r.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("%d mons", randInt(r, 8)))
	}
	if r.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("%d days", randInt(r, 32)))
	}
	if r.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("%d:%02d:%02d.%06d", randInt(r, 24), r.IntN(60), r.IntN(60), r.IntN(1000000)))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d seconds", randInt(r, 33)))
	}
	return strings.Join(parts, " ")
}

// randText returns a string with ASCII, control characters, quotes,
// backslashes and multi-byte characters.
func randText(r *rand.Rand, maxLen int) string {
	n := r.IntN(maxLen + 1)
	var b strings.Builder
	for range n {
		switch r.IntN(8) {
		case 0:
			b.WriteRune(rune(1 + r.IntN(31)))
		case 1:
			b.WriteRune(pick(r, '\'', '"', '\\', ' ', '\u007f', ',', '{', '}'))
		case 2:
			b.WriteRune(pick(r, 'é', 'ß', '€', '日', '𝄞', '\u00a0', '\u200b', '\ufeff'))
		default:
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return b.String()
}

var colTypes = []colType{
	{key: "bool", decl: "boolean", edges: []string{
		"true", "false", "NULL", "'t'", "'f'", "'yes'", "'no'", "'on'", "'off'", "'1'", "'0'",
		"' true '", "'TRUE'", "'tr'", "'ye'", "'of'", "'o'", "'maybe'", "''", "1::boolean", "'2'",
	}, random: func(r *rand.Rand) string { return pick(r, "true", "false", "'t'", "'n'") }},

	{key: "int2", decl: "smallint", minmax: true, edges: []string{
		"32767", "-32768", "32768", "-32769", "'32767'", "'-32768'", "'32768'", "0", "'  12  '",
		"'1e3'", "'12.5'", "12.5", "-12.5", "13.5", "'0x10'", "'1_000'", "''", "32767::smallint + 1::smallint",
		"'-0'", "'+7'", "1e4", "32767.5", "-32768.5", "'９'",
	}, random: func(r *rand.Rand) string { return strconv.FormatInt(randInt(r, 16), 10) }},

	{key: "int4", decl: "integer", minmax: true, edges: []string{
		"2147483647", "-2147483648", "2147483648", "'-2147483649'", "'2147483647'", "2147483647 + 1",
		"-2147483648 - 1", "-(-2147483648)", "2147483647.4", "'1.0'", "''", "' '", "'12 34'",
	}, random: func(r *rand.Rand) string { return strconv.FormatInt(randInt(r, 32), 10) }},

	{key: "int8", decl: "bigint", minmax: true, edges: []string{
		"9223372036854775807", "-9223372036854775808", "9223372036854775808", "'9223372036854775808'",
		"'-9223372036854775808'", "'-9223372036854775809'", "9223372036854775807 + 1",
		"-9223372036854775807 - 2", "9223372036854775807.5", "'1e18'", "'-'", "'+'",
	}, random: func(r *rand.Rand) string { return strconv.FormatInt(randInt(r, 64), 10) }},

	{key: "float4", decl: "real", minmax: true, edges: []string{
		"'NaN'", "'nan'", "'Infinity'", "'-Infinity'", "'inf'", "'-inf'", "'+inf'", "'-0'", "'0'",
		"'3.4028235e38'", "'3.4028236e38'", "'3.5e38'", "'-3.5e38'", "'1e-45'", "'1.4e-45'", "'1e-46'",
		"'1.17549435e-38'", "'1e-39'", "3.4028235e38::float8", "1e39::float8", "'1e39'::real",
		"1e-50::float8", "'0.1'", "'16777217'", "'1e'", "'.'", "'1.5e+2'", "' 1.5 '",
	}, random: func(r *rand.Rand) string {
		f := float32(randFloat(r))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return "'" + strconv.FormatFloat(float64(f), 'g', -1, 32) + "'"
		}
		return lit(strconv.FormatFloat(float64(f), 'g', -1, 32))
	}},

	{key: "float8", decl: "double precision", minmax: true, edges: []string{
		"'NaN'", "'Infinity'", "'-Infinity'", "'-inf'", "'-0'", "-0.0::float8", "'1.7976931348623157e308'",
		"'1.8e308'", "'1e309'", "'-1e309'", "'4.9e-324'", "'5e-324'", "'2e-324'", "'1e-400'",
		"'2.2250738585072014e-308'", "1e308::float8 * 10", "'1e308'::float8 * -10", "1e-300::float8 * 1e-300",
		"'0.1'::float8 + '0.2'", "'9007199254740993'", "1e400", "'Infinity'::float8 - 'Infinity'",
	}, random: func(r *rand.Rand) string {
		f := randFloat(r)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "'" + strconv.FormatFloat(f, 'g', -1, 64) + "'"
		}
		return lit(strconv.FormatFloat(f, 'g', -1, 64))
	}},

	{key: "numeric", decl: "numeric", minmax: true, edges: []string{
		"'NaN'", "'nan'", "'Infinity'", "'-Infinity'", "'inf'", "'+inf'", "'-inf'", "'NaN'::float8",
		"'Infinity'::float8", "'-0'", "'0.000'", "'-0.000'", "'1e-16383'", "'1e-16384'", "'1e131071'",
		"'1e131072'", "10::numeric ^ 1000000", "'0.' || repeat('0', 1000) || '1'", "'1.500'",
		"'  1.5  '", "'1,5'", "'1e'", "'.5'", "'5.'", "'-.5e-3'", "1e400", "12345678901234567890.123456789",
		"'9999999999999999999999999999.9999999999'", "'1E+3'", "0.1::float4", "1e-300::float8",
	}, random: func(r *rand.Rand) string {
		if r.IntN(4) == 0 {
			return lit(randDecimal(r, 3, 3) + "e" + strconv.Itoa(r.IntN(80)-40))
		}
		return randDecimal(r, 40, 40)
	}},

	{key: "num103", decl: "numeric(10,3)", minmax: true, edges: []string{
		"'1234567.1234'", "'1234567.9995'", "'9999999.9995'", "'-9999999.9995'", "'-9999999.999'",
		"'0.0005'", "'-0.0005'", "'0.0004'", "'NaN'", "'Infinity'", "'1e7'", "'1e6'", "'-0'",
	}, random: func(r *rand.Rand) string { return randDecimal(r, 8, 5) }},

	{key: "num3m2", decl: "numeric(3,-2)", minmax: true, edges: []string{
		"'99949'", "'99950'", "'-99949.99'", "'49.99'", "'50'", "'-50'", "'150'", "'0'", "'-0'",
		"'NaN'", "'1e4'", "'12345'",
	}, random: func(r *rand.Rand) string { return randDecimal(r, 5, 2) }},

	{key: "text", decl: "text", minmax: true, edges: []string{
		"''", "' '", "'a''b'", `E'\\'`, `E'\t\n\r'`, `E'\x01\x1f\x7f'`, `E'\xff'`, `E'\xc3'`, `E'\u0000'`,
		`E'\x00'`, "chr(0)", "chr(1)", "chr(1114111)", "chr(55296)", `U&'\00e9'`, `U&'d\0061t\+000061'`,
		`E'\u00e9'`, `E'\U0001F600'`, "'NULL'", "'\"quoted\"'", "'{}'", "repeat('x', 10000)",
		`E'\ud800'`, `E'\303\251'`, `'multi` + "\n" + `line'`,
	}, random: func(r *rand.Rand) string { return escLit(randText(r, 12)) }},

	{key: "varchar", decl: "varchar", minmax: true, edges: []string{
		"''", "'abc   '", `E'a\x02b'`, "'日本語'",
	}, random: func(r *rand.Rand) string { return escLit(randText(r, 8)) }},

	{key: "varchar5", decl: "varchar(5)", minmax: true, edges: []string{
		"'abcde'", "'abcdef'", "'abc   '", "'abcde      '", "'abcde f'", "'日本語日本語'", "'日本語日本'",
		"'ab'::varchar(1)", "'abcdefg'::varchar(5)", "''", "12345678", "123456::text",
	}, random: func(r *rand.Rand) string { return escLit(randText(r, 7)) }},

	{key: "char3", decl: "char(3)", minmax: true, edges: []string{
		"'a'", "''", "'abc'", "'abcd'", "'abc '", "' a'", "'日本'", "'ab'::char(3) || 'c'",
	}, random: func(r *rand.Rand) string { return escLit(randText(r, 4)) }},

	{key: "date", decl: "date", minmax: true, edges: []string{
		"'0001-01-01'", "'9999-12-31'", "'0001-01-01'::date - 1", "'9999-12-31'::date + 1", "'infinity'",
		"'-infinity'", "'epoch'", "'4714-11-24 BC'", "'4714-11-23 BC'", "'5874897-12-31'", "'5874898-01-01'",
		"'2026-02-29'", "'2024-02-29'", "'2026-13-01'", "'0000-01-01'", "'January 8, 1999'", "'20200101'",
		"'2020-1-5'", "'2026-01-02 00:00:00Z'", "'2026-01-02 +00'", "'2026-01-02 23:59:59.999999'",
		"'1999-01-08 04:05:06'::timestamp::date", "'today'::date - 'today'::date + '2000-01-01'::date",
		"'1 BC'", "'2026/01/02'", "'99-01-02'",
	}, random: func(r *rand.Rand) string {
		return lit(pgDate(randTime(r)))
	}},

	{key: "ts", decl: "timestamp", minmax: true, edges: []string{
		"'0001-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "'9999-12-31 23:59:59.9999995'",
		"'9999-12-31 23:00'::timestamp + interval '2 hours'", "'0001-01-01'::timestamp - interval '1 microsecond'",
		"'infinity'", "'-infinity'", "'epoch'", "'294276-12-31 23:59:59.999999'", "'294277-01-01 00:00:00'",
		"'4714-11-24 00:00:00 BC'", "'4714-11-23 23:59:59 BC'", "'2026-01-02 03:04:05+01:00'",
		"'2026-01-02 03:04:05.1234565'", "'2026-01-02 03:04:05.0000005'", "'2026-01-02 24:00:00'",
		"'2026-01-02 24:00:01'", "'2026-01-02T03:04:05'", "'2026-01-02 03:04'", "'2026-01-02'",
		"'January 8, 1999 04:05:06'", "'294246-12-31 23:00'::timestamp + interval '1 year'",
		"'2026-01-31'::timestamp + interval '1 mon'", "'2026-03-29 02:30 Europe/Paris'",
	}, random: func(r *rand.Rand) string { return lit(pgTimestamp(randTime(r), true)) }},

	{key: "tstz", decl: "timestamptz", minmax: true, edges: []string{
		"'0001-01-01 00:00:00+00'", "'9999-12-31 23:59:59.999999+00'", "'10000-01-01 00:00:00+00'",
		"'0001-01-01 00:00:00+01'", "'infinity'", "'-infinity'", "'epoch'", "'2026-01-02 03:04:05+05:30'",
		"'2026-01-02 03:04:05-12'", "'2026-01-02 03:04:05 +14:00'", "'2026-01-02 03:04:05+15:59'",
		"'2026-01-02 03:04:05+16'", "'294276-12-31 23:59:59.999999+00'", "'294276-12-31 23:59:59.999999-01'",
		"'2026-01-02 03:04:05 UTC'", "'2026-01-02 03:04:05 Z'", "'2026-01-02 03:04:05 America/New_York'",
		"'2026-01-02'", "'4714-11-24 00:00:00+00 BC'",
	}, random: func(r *rand.Rand) string {
		return lit(pgTimestamp(randTime(r), true) + pick(r, "+00", "-05", "+05:30", "+14", "-12:45"))
	}},

	{key: "interval", decl: "interval", minmax: true, edges: []string{
		"'178956970 years 7 mons'", "'-178956970 years -8 mons'", "'178956970 years 8 mons'",
		"interval '178956970 years 7 mons' + '1 mon'", "'2147483647 days'", "'-2147483648 days'",
		"'2147483648 days'", "'2562047788:00:54.775807'", "'-2562047788:00:54.775808'",
		"'2562047788:00:54.775808'", "'3000000000 hours'", "'2562047788 hours'", "'1.5 months'",
		"'1.5 years'", "'0.5 days'", "'1 day -1 hour'", "'-1 day +1 hour'", "'@ 1 hour ago'",
		"'P1Y2M3DT4H5M6S'", "'PT0.000001S'", "'P0001-02-03T04:05:06'", "'1 microsecond'",
		"'0.0000005 seconds'", "'0.0000015 seconds'", "'1 week'", "'1 millennium'", "'1 decade 2 centuries'",
		"'00:00:00'", "'-00:00:01'", "'1 2:03:04'", "'1-2'", "'1 year 2 months 3 days 04:05:06.789'",
		"'abc'", "'1 fortnight'", "interval '-178956970 years -8 mons' - interval '1 mon'",
		"'2147483647 days' + interval '1 day'", "'106751991 days 4:00:54.775807'",
	}, random: func(r *rand.Rand) string { return lit(randInterval(r)) }},

	{key: "time", decl: "time", minmax: true, edges: []string{
		"'00:00:00'", "'24:00:00'", "'24:00:00.000001'", "'23:59:59.999999'", "'23:59:59.9999995'",
		"'1:2'", "'04:05 PM'", "'12:00 AM'", "'13:00 PM'", "'allballs'", "'040506'", "'040506.789'",
		"'T040506'", "'12:34:56+02'", "'12:34:56 Europe/Berlin'", "'2003-04-12 04:05:06 Europe/Berlin'",
		"'2003-04-12 04:05:06'", "'25:00'", "'12:60'", "'12:34:61'", "'12:34:60'", "'abc'", "'12'",
		"time '23:00' + interval '2 hours'", "'2026-01-02 03:04:05'::timestamp::time", "'-1 hour'::interval::time",
	}, random: func(r *rand.Rand) string { return lit(randTimeOfDay(r)) }},

	{key: "time3", decl: "time(3)", minmax: true, edges: []string{
		"'23:59:59.9995'", "'23:59:59.9994'", "'12:00:00.0005'", "'00:00:00.0004'", "'24:00:00'",
	}, random: func(r *rand.Rand) string { return lit(randTimeOfDay(r)) }},

	{key: "timetz", decl: "timetz", minmax: true, edges: []string{
		"'00:00:00+00'", "'24:00:00-15:59'", "'23:59:59.999999+15:59:59'", "'12:00+02'", "'11:00+01'",
		"'12:00'", "'12:00 PST'", "'12:00 PDT'", "'12:00 zulu'", "'040506-08'", "'12:00+16'", "'12:00-15:59:60'",
		"'12:34:56 Europe/Berlin'", "'2003-04-12 04:05:06 Europe/Berlin'", "'12:00 GMT+3'", "'allballs'",
		"'12:00 +5:30'", "timetz '23:00+02' + interval '2 hours'", "'2026-01-02 03:04:05+03'::timestamptz::timetz",
	}, random: func(r *rand.Rand) string { return lit(randTimeOfDay(r) + randZone(r)) }},
}

// pgDate formats the date of t as PostgreSQL reads it.
func pgDate(t time.Time) string {
	s := pgTimestamp(t, false)
	return s[:strings.IndexByte(s, ' ')] + s[strings.IndexByte(s, ' ')+9:]
}
