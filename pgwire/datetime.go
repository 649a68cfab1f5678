package pgwire

import (
	"math"

	"streamdb/types"
)

// PostgreSQL's binary date and timestamp values count from 2000-01-01;
// types.Datum counts from 1970-01-01.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1_000_000
	microsPerDay  = 86400 * 1_000_000
)

// Infinite dates and timestamps are kept as the same sentinel values in
// types.Datum as on the wire, so that they round-trip.

func dateFromWire(v int32) types.Datum {
	if v == math.MaxInt32 || v == math.MinInt32 {
		return types.NewDate(int64(v))
	}
	return types.NewDate(int64(v) + pgEpochDays)
}

func dateToWire(days int64) (int32, bool) {
	if days == math.MaxInt32 || days == math.MinInt32 {
		return int32(days), true
	}
	v := days - pgEpochDays
	if v <= math.MinInt32 || v >= math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

func timestampFromWire(v int64) (types.Datum, bool) {
	switch {
	case v == math.MaxInt64 || v == math.MinInt64:
		return types.NewTimestampMicros(v), true
	case v > math.MaxInt64-pgEpochMicros:
		return types.Null, false
	}
	return types.NewTimestampMicros(v + pgEpochMicros), true
}

func timestampToWire(us int64) (int64, bool) {
	switch {
	case us == math.MaxInt64 || us == math.MinInt64:
		return us, true
	case us < math.MinInt64+pgEpochMicros+1:
		return 0, false
	}
	return us - pgEpochMicros, true
}
