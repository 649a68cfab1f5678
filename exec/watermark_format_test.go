package exec

import (
	"encoding/binary"
	"testing"

	"streamdb/types"
)

// TestWatermarkStoredForm: a watermark is stored in microseconds since
// 1970, as before timestamp datums counted from 2000, and flagged as the
// datum's own microseconds only from 294247-01-01 on; both read back.
func TestWatermarkStoredForm(t *testing.T) {
	for _, c := range []struct {
		text  string
		flags byte
		i     int64
	}{
		{"2026-01-01 00:00:00", watermarkValid, 1767225600000000},
		{"294246-12-31 23:59:59.999999", watermarkValid, 9223371244799999999},
		{"294247-01-01 00:00:00", watermarkValid | watermarkLong, 9222424560000000000},
		{"294276-12-31 23:59:59.999999", watermarkValid | watermarkLong, 9223371331199999999},
	} {
		d, err := types.ParseText(c.text, types.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		v := encodeWatermark(true, d.I, 7)
		if v[0] != c.flags || int64(binary.BigEndian.Uint64(v[1:9])) != c.i || binary.BigEndian.Uint64(v[9:]) != 7 {
			t.Errorf("%s stored as %x, want flags %d and %d", c.text, v, c.flags, c.i)
		}
		valid, wm, late, err := decodeWatermark(v)
		if err != nil || !valid || wm != d.I || late != 7 {
			t.Errorf("%s read back as %v %d %d %v", c.text, valid, wm, late, err)
		}
	}
	// Written before: flag 1, microseconds since 1970.
	old := append([]byte{1}, binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 1767225600000000), 3)...)
	if valid, wm, late, err := decodeWatermark(old); err != nil || !valid || types.FormatText(types.NewTimestamp2000(wm), types.Timestamp) != "2026-01-01 00:00:00" || late != 3 {
		t.Errorf("old form read as %v %d %d %v", valid, wm, late, err)
	}
}
