package sqllogic

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var durationPart = regexp.MustCompile(`^([0-9]+)([a-zµ]+)`)

var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nsec": time.Nanosecond, "nanos": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "usec": time.Microsecond, "micros": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond, "millis": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// parseDuration accepts Go durations ("1.5s", "1m30s") and the humantime
// spellings that sqllogictest-rs accepts ("5sec", "2min", "1day", "1s500ms").
func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	var total time.Duration
	rest := s
	for rest != "" {
		m := durationPart.FindStringSubmatch(rest)
		if m == nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		unit, ok := durationUnits[m[2]]
		if err != nil || !ok {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		total += time.Duration(n) * unit
		rest = rest[len(m[0]):]
	}
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	return total, nil
}
