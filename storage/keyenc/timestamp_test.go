package keyenc

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"streamdb/types"
)

// TestTimestampStoredForm pins the bytes of timestamp keys: microseconds
// since 1970, as every key was written before datums counted from 2000, so
// that old state reads back and new writes of the same values are the
// same keys; and the long form of the years 294247 to 294276, in order
// between the short forms and infinity.
func TestTimestampStoredForm(t *testing.T) {
	short := func(unix int64) []byte {
		return binary.BigEndian.AppendUint64([]byte{tagTimestamp}, uint64(unix)^(1<<63))
	}
	for _, c := range []struct {
		text string
		unix int64
	}{
		{"1970-01-01 00:00:00", 0},
		{"2000-01-01 00:00:00", 946684800000000},
		{"2024-03-05 14:07:09.123456", 1709647629123456},
		{"4714-11-24 00:00:00 BC", -210866803200000000},
		{"294246-12-31 23:59:59.999999", 9223371244799999999},
		{"infinity", math.MaxInt64},
		{"-infinity", math.MinInt64},
	} {
		d, err := types.ParseText(c.text, types.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		want := short(c.unix)
		for _, enc := range []func([]byte, types.Datum) []byte{Append, AppendValue, AppendCmp} {
			if got := enc(nil, d); !bytes.Equal(got, want) {
				t.Errorf("%s: encoded %x, want %x (the form stored before)", c.text, got, want)
			}
		}
		got, rest, err := Decode(want)
		if err != nil || len(rest) != 0 || got.K != types.KindTimestamp || got.I != d.I {
			t.Errorf("%s: stored form %x decodes to %+v, %v (rest %d), want %+v", c.text, want, got, err, len(rest), d)
		}
	}
	var keys [][]byte
	for _, s := range []string{"294246-12-31 23:59:59.999999", "294247-01-01 00:00:00", "294250-06-01 12:00:00", "294276-12-31 23:59:59.999999", "infinity"} {
		d, err := types.ParseText(s, types.Timestamptz)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		k := Append(nil, d)
		got, rest, err := Decode(append(k, tagNull))
		if err != nil || len(rest) != 1 || got.I != d.I {
			t.Errorf("%s: key %x decodes to %+v, %v (rest %d)", s, k, got, err, len(rest))
		}
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Errorf("key %d (%x) does not sort before key %d (%x)", i-1, keys[i-1], i, keys[i])
		}
	}
	// A long form holding a value the short form has is not a key this
	// package writes.
	bad := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64([]byte{tagTimestamp}, timestampLong), uint64(0)^(1<<63))
	if _, _, err := Decode(bad); err == nil {
		t.Errorf("decoded a long form of a value with a short form")
	}
}
