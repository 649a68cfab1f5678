package types

import "testing"

// Expected strings are PostgreSQL 15's output for the same values.
func TestFormatFloatMatchesPostgres(t *testing.T) {
	tenth, fifth := 0.1, 0.2 // not constants: Go folds constant arithmetic exactly
	cases := []struct {
		f    float64
		t    Type
		want string
	}{
		{1000000, Float8, "1000000"},
		{123456, Float8, "123456"},
		{1e15, Float8, "1e+15"},
		{tenth + fifth, Float8, "0.30000000000000004"},
		{1e-5, Float8, "1e-05"},
		{1.5e100, Float8, "1.5e+100"},
		{-2.5, Float8, "-2.5"},
		{1000000, Float4, "1e+06"},
		{0.0001, Float8, "0.0001"},
	}
	for _, c := range cases {
		if got := FormatText(NewFloat(c.f), c.t); got != c.want {
			t.Errorf("FormatText(%v, %s) = %q, want %q", c.f, c.t, got, c.want)
		}
	}
}

func TestParseTextRoundTrip(t *testing.T) {
	for _, c := range []struct {
		in   string
		t    Type
		want string
	}{
		{"2026-11-29 10:00:00", Timestamp, "2026-11-29 10:00:00"},
		{"2026-11-29T10:00:00.25Z", Timestamp, "2026-11-29 10:00:00.25"},
		{"2026-11-29 10:00:00+02", Timestamptz, "2026-11-29 08:00:00+00"},
		{"2026-02-03", Date, "2026-02-03"},
		{"1 day 02:00:00", Interval, "1 day 02:00:00"},
		{"10 seconds", Interval, "00:00:10"},
		{"14 months", Interval, "1 year 2 mons"},
		{"123.4500", Numeric, "123.4500"},
		{"true", Bool, "t"},
	} {
		d, err := ParseText(c.in, c.t)
		if err != nil {
			t.Errorf("ParseText(%q, %s): %v", c.in, c.t, err)
			continue
		}
		if got := FormatText(d, c.t); got != c.want {
			t.Errorf("ParseText(%q, %s) printed %q, want %q", c.in, c.t, got, c.want)
		}
	}
}
