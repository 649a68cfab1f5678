package types

import (
	"testing"

	"streamdb/sqlerr"
)

// TestInputOutputLikePostgres checks text input and output against what
// PostgreSQL 15 prints or raises for the same input.
func TestInputOutputLikePostgres(t *testing.T) {
	for _, c := range []struct {
		in   string
		t    Type
		out  string
		code string
	}{
		{in: "9223372036854775808", t: Int8, code: "22003"},
		{in: "99999", t: Int2, code: "22003"},
		{in: "abc", t: Int4, code: "22P02"},
		{in: "1e309", t: Float8, code: "22003"},
		{in: "1e-400", t: Float8, code: "22003"},
		{in: "1e-46", t: Float4, code: "22003"},
		{in: "1e39", t: Float4, code: "22003"},
		{in: "-inf", t: Float8, out: "-Infinity"},
		{in: "NaN", t: Numeric, out: "NaN"},
		{in: "+inf", t: Numeric, out: "Infinity"},
		{in: "-Infinity", t: Numeric, out: "-Infinity"},
		{in: "-0", t: Numeric, out: "0"},
		{in: "sNaN", t: Numeric, code: "22P02"},
		{in: "1e200000", t: Numeric, code: "22003"},
		{in: "1e-16384", t: Numeric, code: "22003"},
		{in: "infinity", t: Timestamp, out: "infinity"},
		{in: "-infinity", t: Date, out: "-infinity"},
		{in: "4714-11-24 BC", t: Date, out: "4714-11-24 BC"},
		{in: "4714-11-23 BC", t: Date, code: "22008"},
		{in: "0000-01-01", t: Date, code: "22008"},
		{in: "10000-01-01 01:00:00", t: Timestamp, out: "10000-01-01 01:00:00"},
		{in: "2026-01-02 03:04:05.1234567", t: Timestamp, out: "2026-01-02 03:04:05.123457"},
		{in: "0001-12-31 23:00:00+00 BC", t: Timestamptz, out: "0001-12-31 23:00:00+00 BC"},
		{in: "294276-12-31 23:59:59.999999", t: Timestamp, out: "294276-12-31 23:59:59.999999"},
		{in: "294277-01-01", t: Timestamp, code: "22008"},
		{in: "3000000000 hours", t: Interval, code: "22015"},
		{in: "2562047788 hours", t: Interval, out: "2562047788:00:00"},
		{in: "-2562047788:00:54.775808", t: Interval, out: "-2562047788:00:54.775808"},
		{in: "1.5 months", t: Interval, out: "1 mon 15 days"},
		{in: "1.5 years", t: Interval, out: "1 year 6 mons"},
		{in: "-1 day 02:03:04.5", t: Interval, out: "-1 days +02:03:04.5"},
		{in: "-1 years 2 mons -3 days 04:00:00", t: Interval, out: "-10 mons -3 days +04:00:00"},
		{in: "@ 1 hour ago", t: Interval, out: "-01:00:00"},
	} {
		d, err := ParseText(c.in, c.t)
		switch {
		case c.code != "":
			if sqlerr.Code(err) != c.code {
				t.Errorf("%s %q: got %v (%q), want %s", c.t, c.in, err, sqlerr.Code(err), c.code)
			}
		case err != nil:
			t.Errorf("%s %q: %v", c.t, c.in, err)
		case FormatText(d, c.t) != c.out:
			t.Errorf("%s %q: got %q, want %q", c.t, c.in, FormatText(d, c.t), c.out)
		}
	}
}
