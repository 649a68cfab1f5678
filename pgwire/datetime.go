package pgwire

import (
	"math"

	"streamdb/types"
)

// PostgreSQL's binary dates count days from 2000-01-01, types.Datum's
// from 1970-01-01; its binary timestamps are types.Datum's microseconds
// (both count from 2000-01-01).
const pgEpochDays = types.PostgresEpochDays

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

// timestampFromWire reads a binary timestamp; ok is false outside
// PostgreSQL's range (timestamp_recv refuses those too).
func timestampFromWire(v int64) (types.Datum, bool) {
	if !types.ValidTimestamp(v) {
		return types.Null, false
	}
	return types.NewTimestamp2000(v), true
}
