package sql

import (
	"strconv"
	"strings"

	"streamdb/sqlerr"
)

// streamdb runs in UTC: the timezone parameter takes every value
// PostgreSQL accepts that means an offset of zero, in each form SET TIME
// ZONE and SET timezone have (a zone name, a POSIX-style offset string, a
// number of hours, an INTERVAL; LOCAL and DEFAULT reset), and refuses any
// other zone. SHOW answers what PostgreSQL answers for the value: a known
// zone name in its canonical spelling, an offset string as given, and
// "<+00>-00" for a number or an INTERVAL.

// utcZoneNames are the zone names of tzdata whose offset is always zero,
// by lower-case spelling, with PostgreSQL's canonical spelling.
var utcZoneNames = map[string]string{}

func init() {
	for _, n := range []string{
		"UTC", "Etc/UTC", "UCT", "Etc/UCT", "GMT", "Etc/GMT", "GMT0", "GMT+0", "GMT-0",
		"Etc/GMT0", "Etc/GMT+0", "Etc/GMT-0", "Greenwich", "Etc/Greenwich",
		"Universal", "Etc/Universal", "Zulu", "Etc/Zulu", "Z",
	} {
		utcZoneNames[strings.ToLower(n)] = n
	}
}

// utcTimeZone checks a timezone setting and returns what SHOW answers for
// it.
func utcTimeZone(value string) (string, error) {
	v := strings.TrimSpace(value)
	if n, ok := utcZoneNames[strings.ToLower(v)]; ok {
		return n, nil
	}
	if strings.HasPrefix(strings.ToLower(v), "interval") {
		if lit, ok := intervalLiteralText(v[len("interval"):]); ok {
			if zeroDigits(lit) {
				return "<+00>-00", nil
			}
		}
		return "", unsupportedZone(value)
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f == 0 {
			return "<+00>-00", nil
		}
		return "", unsupportedZone(value)
	}
	// A POSIX-style offset ("+00:00", "UTC0", "-0") names zero when its
	// digits are all zero.
	rest := v
	for _, p := range []string{"utc", "gmt"} {
		if strings.HasPrefix(strings.ToLower(rest), p) {
			rest = rest[len(p):]
			break
		}
	}
	if rest != "" && strings.Trim(rest, "+-0123456789:") == "" && zeroDigits(rest) {
		return v, nil
	}
	return "", unsupportedZone(value)
}

// intervalLiteralText is the quoted text of an INTERVAL 'text' [qualifier]
// given after the INTERVAL keyword.
func intervalLiteralText(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "'") {
		return "", false
	}
	end := strings.Index(s[1:], "'")
	if end < 0 {
		return "", false
	}
	return s[1 : 1+end], true
}

// zeroDigits reports whether s has digits and all of them are 0.
func zeroDigits(s string) bool {
	seen := false
	for _, r := range s {
		if r >= '1' && r <= '9' {
			return false
		}
		if r == '0' {
			seen = true
		}
	}
	return seen
}

func unsupportedZone(value string) error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "time zone %q is not supported; streamdb runs in UTC", value).
		WithHint("Use SET TIME ZONE 'UTC' (or an offset of zero: 0, '+00:00', INTERVAL '+00:00' HOUR TO MINUTE) and convert times in the client.")
}
