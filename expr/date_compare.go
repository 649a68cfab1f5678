package expr

import "streamdb/types"

// dateCompareKey is a date operand of a comparison with a timestamp or
// timestamptz, as the timestamp it compares as: midnight of that day. A
// date past the timestamp range still compares (PostgreSQL's
// date_cmp_timestamp): one after it is later than every finite timestamp
// and earlier than infinity, one before it the mirror image, so it maps
// to the microsecond just inside the infinities. The key never leaves
// the comparison.
func dateCompareKey(d types.Datum) types.Datum {
	if d.IsNull() {
		return d
	}
	ts, err := DateToTimestamp(d.I)
	if err == nil {
		return ts
	}
	if d.I > 0 {
		return types.NewTimestamp2000(types.TimestampInfinity - 1)
	}
	return types.NewTimestamp2000(types.TimestampNegInfinity + 1)
}
