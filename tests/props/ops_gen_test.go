package props

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// argPools holds, per type key, edge inputs as typed SQL expressions. Every
// pool also yields NULL of its type and random values (randomArg).
var argPools = map[string][]string{
	"bool": {"true", "false"},
	"int2": {"0::int2", "1::int2", "(-1)::int2", "32767::int2", "(-32768)::int2", "2::int2", "100::int2"},
	"int4": {"0", "1", "-1", "2", "2147483647", "(-2147483648)", "46341", "65536", "7"},
	"int8": {"0::int8", "1::int8", "(-1)::int8", "9223372036854775807", "(-9223372036854775808)::int8",
		"3037000500::int8", "4294967296::int8", "10::int8"},
	"float4": {"0::real", "'-0'::real", "1.5::real", "'NaN'::real", "'Infinity'::real", "'-Infinity'::real",
		"'3.4028235e38'::real", "'1e-45'::real", "'1.17549435e-38'::real", "0.1::real", "(-2.5)::real", "16777217::real"},
	"float8": {"0::float8", "'-0'::float8", "1.5::float8", "'NaN'::float8", "'Infinity'::float8",
		"'-Infinity'::float8", "'1.7976931348623157e308'::float8", "'5e-324'::float8", "0.1::float8",
		"(-2.5)::float8", "'1e300'::float8", "'-1e-300'::float8", "9007199254740993::float8", "0.5::float8"},
	"numeric": {"0::numeric", "'-0.000'::numeric", "1.5::numeric", "'NaN'::numeric", "'Infinity'::numeric",
		"'-Infinity'::numeric", "'1e100'::numeric", "'0.000000000000000000001'::numeric", "(-2.5)::numeric",
		"'123456789012345678901234567890.123456789'::numeric", "0.5::numeric", "3::numeric", "'1e-20'::numeric",
		"'9223372036854775807.5'::numeric", "'2147483647.5'::numeric", "'-32768.5'::numeric",
		// Scales at the edges: many fraction digits, trailing zeros, a
		// product or quotient whose scale PostgreSQL fixes.
		"'0.00000000000000000000000000000000000000001'::numeric", "'123.4500000'::numeric",
		"'99999999999999999999.99999999999999999999'::numeric", "'-1e-130'::numeric",
		"'5835.6694'::numeric"},
	"text": {"''", "'abc'", "'ABC'", "' x '", "'é'", "E'\\t'", "'%_'", "'a%'", "'_'", "'Ab Cd'", "'xx'",
		"'1'", "'-12'", "'1.5'", "'NaN'", "'2026-01-02'", "'1 day'", "'true'", "'  7  '", "'ß'", "'日本'",
		// Multi-byte text, as values and as LIKE/regex patterns.
		"'日本語'", "'日%'", "'_本'", "'%語'", "'É'", "'école'", "'ÉCOLE'", "'aé日𝄞'", "'𝄞'", "'Ωmega'", "'語'"},
	"date": {"'2026-01-31'::date", "'0001-01-01'::date", "'9999-12-31'::date", "'infinity'::date",
		"'-infinity'::date", "'2024-02-29'::date", "'1970-01-01'::date", "'2000-03-01'::date",
		"'2026-01-31'::date"},
	"ts": {"'2026-01-31 12:34:56.789012'::timestamp", "'0001-01-01 00:00:00'::timestamp",
		"'9999-12-31 23:59:59.999999'::timestamp", "'infinity'::timestamp", "'-infinity'::timestamp",
		"'2024-02-29 00:00:00'::timestamp", "'1970-01-01 00:00:00'::timestamp", "'2000-01-03 00:00:00.5'::timestamp",
		"'294276-12-31 23:59:59.999999'::timestamp",
		"'2026-01-31 23:59:59'::timestamp"},
	"tstz": {"'2026-01-31 12:34:56.789012+00'::timestamptz", "'0001-01-01 00:00:00+00'::timestamptz",
		"'9999-12-31 23:59:59.999999+00'::timestamptz", "'infinity'::timestamptz", "'-infinity'::timestamptz",
		"'2024-02-29 23:00:00-02'::timestamptz", "'294276-12-31 23:59:59.999999+00'::timestamptz",
		"'2026-03-31 00:00:00+00'::timestamptz"},
	"interval": {"'1 mon'::interval", "'-1 day'::interval", "'1 day 02:03:04.5'::interval", "'0'::interval",
		"'178956970 years 7 mons'::interval", "'2147483647 days'::interval", "'-2147483648 days'::interval",
		"'2562047788:00:54.775807'::interval", "'1.5 mons'::interval", "'-00:00:00.000001'::interval",
		"'1 year 2 mons 3 days 04:05:06.789'::interval", "'30 days'::interval", "'24:00:00'::interval",
		// Across months: a month is not 30 days when added to a date.
		"'-1 mon'::interval", "'1 mon -30 days'::interval", "'11 mons 29 days 23:59:59.999999'::interval",
		"'1 year -1 day'::interval", "'35 days 27:00:00'::interval"},
	"time": {"'00:00:00'::time", "'24:00:00'::time", "'23:59:59.999999'::time", "'12:34:56.789'::time",
		"'00:00:00.000001'::time", "'12:00'::time"},
	"timetz": {"'00:00:00+00'::timetz", "'24:00:00-15:59'::timetz", "'12:00+02'::timetz", "'11:00+01'::timetz",
		"'23:59:59.999999+15:59:59'::timetz", "'12:34:56.789-03:30'::timetz"},
	// Regular expressions (typed text): multi-byte, classes, groups,
	// anchors, and an invalid one.
	"regex": {"'^日'", "'本$'", "'.'", "'^.$'", "'é+'", "'(a|b)'", "'^a.c$'", "'(日)(本)?'",
		"'x(b)?'", "'[à-ÿ]'", "'(?:a)(b)'", "'\\d+'", "'['", "'𝄞'", "'^$'", "'[^a-z]'", "'a{2}'"},
	"int4[]": {"'{}'::int4[]", "ARRAY[1,2,3]", "ARRAY[1,NULL]", "ARRAY[NULL::int4]", "ARRAY[2147483647,-2147483648]",
		"ARRAY[3,1,2,1]", "'{1}'::int4[]", "ARRAY[1,2]"},
	"text[]": {"'{}'::text[]", "ARRAY['a','b c']", "'{a,\"\",NULL,\"NULL\"}'::text[]", "ARRAY['x\\y','q\"']",
		"ARRAY['abc','ABC','é']", "ARRAY['a']", "ARRAY[NULL::text]"},
}

// casts lists the SQL names to cast to, by type key.
var castNames = map[string]string{
	"bool": "boolean", "int2": "smallint", "int4": "integer", "int8": "bigint", "float4": "real",
	"float8": "double precision", "numeric": "numeric", "text": "text", "date": "date", "ts": "timestamp",
	"tstz": "timestamptz", "interval": "interval", "time": "time", "timetz": "timetz",
	"int4[]": "int4[]", "text[]": "text[]",
}

// randomArg returns an edge input of type key, NULL, or a random value.
func randomArg(r *rand.Rand, key string) string {
	if key == "regex" { // text, drawn from its own pool
		if r.IntN(8) == 0 {
			return randomArg(r, "text")
		}
		return pick(r, argPools[key]...)
	}
	switch n := r.IntN(20); {
	case n == 0:
		return "NULL::" + castNames[key]
	case n < 14:
		return pick(r, argPools[key]...)
	}
	cast := func(s string) string { return "(" + s + ")::" + castNames[key] }
	switch key {
	case "int2":
		return cast(strconv.FormatInt(randInt(r, 16), 10))
	case "int4":
		return cast(strconv.FormatInt(randInt(r, 32), 10))
	case "int8":
		return cast(strconv.FormatInt(randInt(r, 64), 10))
	case "float4", "float8":
		return cast(lit(strconv.FormatFloat(randFloat(r), 'g', -1, 64)))
	case "numeric":
		return cast(lit(randDecimal(r, 25, 25)))
	case "text":
		return escLit(randText(r, 6))
	case "date":
		return cast(lit(pgDate(randTime(r))))
	case "ts":
		return cast(lit(pgTimestamp(randTime(r), true)))
	case "tstz":
		return cast(lit(pgTimestamp(randTime(r), true) + "+00"))
	case "interval":
		return cast(lit(randInterval(r)))
	case "time":
		return cast(lit(randTimeOfDay(r)))
	case "timetz":
		return cast(lit(randTimeOfDay(r) + randZone(r)))
	case "int4[]", "text[]":
		elems := make([]string, r.IntN(5))
		for i := range elems {
			elems[i] = randomArg(r, key[:len(key)-2])
		}
		return "ARRAY[" + strings.Join(elems, ", ") + "]::" + castNames[key]
	}
	return pick(r, argPools[key]...)
}

// opForm is an operator or function applied to arguments of given types:
// form has %[1]s, %[2]s, ... for the arguments.
type opForm struct {
	form string
	args []string
}

var numericKeys = []string{"int2", "int4", "int8", "float4", "float8", "numeric"}

// opForms lists every form the operator test draws from.
func opForms() []opForm {
	var fs []opForm
	add := func(form string, args ...string) { fs = append(fs, opForm{form, args}) }
	for _, a := range numericKeys {
		for _, b := range numericKeys {
			for _, op := range []string{"+", "-", "*", "/", "<", "=", ">="} {
				add("%[1]s "+op+" %[2]s", a, b)
			}
			if a != "float4" && a != "float8" && b != "float4" && b != "float8" {
				add("%[1]s %% %[2]s", a, b)
				add("mod(%[1]s, %[2]s)", a, b)
			}
			add("power(%[1]s, %[2]s)", a, b)
			add("greatest(%[1]s, %[2]s)", a, b)
		}
		add("-(%[1]s)", a)
		add("abs(%[1]s)", a)
		for _, f := range []string{"round", "floor", "ceil", "trunc", "sign", "sqrt", "exp", "ln", "log"} {
			add(f+"(%[1]s)", a)
		}
		add("round(%[1]s, %[2]s)", a, "int4")
		add("trunc(%[1]s, %[2]s)", a, "int4")
	}
	// Map order would change the forms, and so the expressions, between
	// runs of one seed: walk the cast names sorted.
	castKeys := slices.Sorted(maps.Keys(castNames))
	for _, to := range castKeys {
		for _, from := range castKeys {
			add("CAST(%[1]s AS "+castNames[to]+")", from)
		}
	}
	add("CAST(%[1]s AS numeric(10,3))", "numeric")
	add("CAST(%[1]s AS numeric(5,0))", "float8")
	add("CAST(%[1]s AS numeric(4,-2))", "numeric")
	add("CAST(%[1]s AS numeric(2,-3))", "float8")
	add("CAST(%[1]s AS varchar(3))", "text")
	for _, k := range []string{"bool", "text", "date", "ts", "tstz", "interval", "time", "timetz"} {
		for _, op := range []string{"<", "=", "<>", ">="} {
			add("%[1]s "+op+" %[2]s", k, k)
		}
	}
	add("%[1]s < %[2]s", "date", "ts")
	add("%[1]s = %[2]s", "ts", "tstz")
	add("%[1]s AND %[2]s", "bool", "bool")
	add("%[1]s OR %[2]s", "bool", "bool")
	add("NOT %[1]s", "bool")
	add("%[1]s IS DISTINCT FROM %[2]s", "int4", "int8")
	// Strings.
	add("%[1]s || %[2]s", "text", "text")
	add("%[1]s || %[2]s", "text", "int4")
	add("%[1]s || %[2]s", "numeric", "text")
	add("%[1]s LIKE %[2]s", "text", "text")
	add("%[1]s ILIKE %[2]s", "text", "text")
	for _, f := range []string{"length", "char_length", "upper", "lower", "trim", "ltrim", "rtrim", "btrim"} {
		add(f+"(%[1]s)", "text")
	}
	add("btrim(%[1]s, %[2]s)", "text", "text")
	add("substr(%[1]s, %[2]s)", "text", "int4")
	add("substr(%[1]s, %[2]s, %[3]s)", "text", "int4", "int4")
	add("substring(%[1]s from %[2]s for %[3]s)", "text", "int4", "int4")
	add("concat(%[1]s, %[2]s, %[3]s)", "text", "int4", "date")
	// Characters, not bytes: searching, slicing and padding multi-byte
	// text, and regular expressions over it.
	add("position(%[1]s in %[2]s)", "text", "text")
	add("strpos(%[1]s, %[2]s)", "text", "text")
	add("left(%[1]s, %[2]s)", "text", "int2")
	add("right(%[1]s, %[2]s)", "text", "int2")
	add("lpad(%[1]s, %[2]s, %[3]s)", "text", "int2", "text")
	add("rpad(%[1]s, %[2]s)", "text", "int2")
	add("reverse(%[1]s)", "text")
	add("replace(%[1]s, %[2]s, %[3]s)", "text", "text", "text")
	add("split_part(%[1]s, %[2]s, %[3]s)", "text", "text", "int2")
	add("translate(%[1]s, %[2]s, %[3]s)", "text", "text", "text")
	add("starts_with(%[1]s, %[2]s)", "text", "text")
	add("octet_length(%[1]s)", "text")
	add("ascii(%[1]s)", "text")
	add("%[1]s LIKE %[2]s ESCAPE '#'", "text", "text")
	add("%[1]s ILIKE %[2]s ESCAPE ''", "text", "text")
	add("like_escape(%[1]s, '#')", "text")
	add("initcap(%[1]s)", "text")
	add("bit_length(%[1]s)", "text")
	add("overlay(%[1]s placing %[2]s from %[3]s for %[4]s)", "text", "text", "int2", "int2")
	add("overlay(%[1]s placing %[2]s from %[3]s)", "text", "text", "int4")
	add("substring(%[1]s for %[2]s)", "text", "int2")
	add("regexp_match(%[1]s, %[2]s)", "text", "regex")
	add("scale(%[1]s)", "numeric")
	add("min_scale(%[1]s)", "numeric")
	add("trim_scale(%[1]s)", "numeric")
	add("%[1]s NOT ILIKE %[2]s", "text", "text")
	for _, op := range []string{"~", "~*", "!~", "!~*"} {
		add("%[1]s "+op+" %[2]s", "text", "regex")
	}
	add("substring(%[1]s from %[2]s)", "text", "regex")
	add("regexp_replace(%[1]s, %[2]s, %[3]s)", "text", "regex", "text")
	add("regexp_replace(%[1]s, %[2]s, %[3]s, 'g')", "text", "regex", "text")
	add("regexp_count(%[1]s, %[2]s)", "text", "regex")
	add("greatest(%[1]s, %[2]s)", "text", "text")
	add("least(%[1]s, %[2]s)", "ts", "ts")
	// Dates, times and intervals.
	for _, k := range []string{"date", "ts", "tstz"} {
		add("%[1]s + %[2]s", k, "interval")
		add("%[1]s - %[2]s", k, "interval")
		add("%[1]s - %[2]s", k, k)
		add("age(%[1]s, %[2]s)", k, k)
		for _, unit := range []string{"microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
			"month", "quarter", "year", "decade", "century", "millennium"} {
			add("date_trunc('"+unit+"', %[1]s)", k)
		}
		for _, field := range []string{"microseconds", "milliseconds", "second", "minute", "hour", "day", "dow",
			"isodow", "doy", "week", "month", "quarter", "year", "epoch", "isoyear", "decade", "century"} {
			add("extract("+field+" from %[1]s)", k)
			add("date_part('"+field+"', %[1]s)", k)
		}
	}
	add("%[1]s + %[2]s", "date", "int4")
	add("%[1]s - %[2]s", "date", "int4")
	add("%[1]s + %[2]s", "interval", "interval")
	add("%[1]s - %[2]s", "interval", "interval")
	add("-(%[1]s)", "interval")
	add("%[1]s * %[2]s", "numeric", "interval")
	add("%[1]s + '1 mon'", "ts")
	add("%[1]s + '1 mon'", "tstz")
	add("%[1]s * %[2]s", "interval", "float8")
	add("%[1]s * %[2]s", "interval", "int4")
	add("%[1]s / %[2]s", "interval", "float8")
	add("%[1]s / %[2]s", "interval", "numeric")
	for _, field := range []string{"microseconds", "second", "minute", "hour", "day", "month", "year", "epoch"} {
		add("extract("+field+" from %[1]s)", "interval")
	}
	// Times of day.
	for _, k := range []string{"time", "timetz"} {
		add("%[1]s + %[2]s", k, "interval")
		add("%[1]s - %[2]s", k, "interval")
		add("%[1]s + %[2]s", "interval", k)
		add("%[1]s + %[2]s", "date", k)
		add("%[1]s + %[2]s", k, "date")
		add("%[1]s BETWEEN %[2]s AND %[3]s", k, k, k)
		for _, field := range []string{"microseconds", "milliseconds", "second", "minute", "hour", "epoch", "day",
			"timezone", "timezone_hour", "timezone_minute", "fortnight"} {
			add("extract("+field+" from %[1]s)", k)
			add("date_part('"+field+"', %[1]s)", k)
		}
	}
	add("%[1]s - %[2]s", "time", "time")
	add("%[1]s * %[2]s", "time", "float8")
	add("-(%[1]s)", "time")
	add("%[1]s + %[2]s", "ts", "time")
	add("%[1]s < %[2]s", "time", "timetz")
	add("%[1]s = %[2]s", "time", "interval")
	add("CAST(%[1]s AS time(2))", "time")
	add("CAST(%[1]s AS timetz(0))", "timetz")
	for _, unit := range []string{"microseconds", "second", "minute", "hour", "day", "week", "month"} {
		add("date_trunc('"+unit+"', %[1]s)", "time")
	}
	add("make_time(%[1]s, %[2]s, %[3]s)", "int4", "int4", "float8")
	add("make_time(12, 34, %[1]s)", "float8")
	// Arrays.
	for _, k := range []string{"int4[]", "text[]"} {
		e := k[:len(k)-2]
		for _, op := range []string{"<", "=", "<>", ">=", "@>", "<@", "&&", "||"} {
			add("%[1]s "+op+" %[2]s", k, k)
		}
		add("%[1]s IS DISTINCT FROM %[2]s", k, k)
		add("%[1]s || %[2]s", k, e)
		add("%[1]s || %[2]s", e, k)
		add("%[1]s = ANY (%[2]s)", e, k)
		add("%[1]s <> ALL (%[2]s)", e, k)
		add("(%[1]s)[%[2]s]", k, "int4")
		for _, f := range []string{"cardinality", "array_ndims", "array_dims"} {
			add(f+"(%[1]s)", k)
		}
		add("array_length(%[1]s, 1)", k)
		add("array_upper(%[1]s, 1)", k)
		add("array_to_string(%[1]s, ',', '*')", k)
		for _, f := range []string{"array_position", "array_positions", "array_remove", "array_append"} {
			add(f+"(%[1]s, %[2]s)", k, e)
		}
		add("array_position(%[1]s, %[2]s, %[3]s)", k, e, "int4")
		add("array_replace(%[1]s, %[2]s, %[3]s)", k, e, e)
		add("array_prepend(%[1]s, %[2]s)", e, k)
		add("array_cat(%[1]s, %[2]s)", k, k)
	}
	add("CAST(%[1]s AS text[])", "int4[]")
	add("CAST(%[1]s AS int4[])", "text[]")
	add("CASE WHEN %[1]s THEN %[2]s ELSE %[3]s END", "bool", "int4", "numeric")
	add("COALESCE(%[1]s, %[2]s)", "int8", "int2")
	add("NULLIF(%[1]s, %[2]s)", "text", "text")
	add("%[1]s IN (%[2]s, %[3]s)", "int4", "int8", "numeric")
	return fs
}

// instantiate fills a form with random arguments.
func (f opForm) instantiate(r *rand.Rand) string {
	args := make([]any, len(f.args))
	for i, k := range f.args {
		args[i] = randomArg(r, k)
	}
	return fmt.Sprintf(f.form, args...)
}
