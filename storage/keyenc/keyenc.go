// Package keyenc encodes datums so that the byte order of the encoding is
// the value order (PostgreSQL's: NULL after every value). Pebble keys of
// state tables are built from it, so range scans come back sorted.
package keyenc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// Tags start every encoded datum. NULL's tag is the largest so that NULL
// sorts last; numbers of every kind share one tag and one encoding (a
// float64 key) when they appear in keys of numeric columns.
const (
	tagBool      = 0x10
	tagInt       = 0x20
	tagFloat     = 0x21
	tagDecimal   = 0x22
	tagNegZero   = 0x23 // value encoding only: the float -0
	tagString    = 0x30
	tagBytes     = 0x31
	tagDate      = 0x40
	tagTimestamp = 0x41
	tagInterval  = 0x50
	// tagIntervalSpan is an interval in comparison keys (AppendCmp): its
	// span, so that intervals PostgreSQL calls equal are equal keys.
	tagIntervalSpan = 0x51
	tagTime         = 0x42
	tagTimeTZ       = 0x43 // the instant in UTC, then the zone: timetz's order
	// tagUUID is followed by the uuid's 16 bytes as they are: fixed
	// length, so bytewise order is uuid_cmp's and nothing needs escaping.
	tagUUID = 0x60
	tagNull = 0xff
)

// Append appends the order-preserving encoding of d to buf.
func Append(buf []byte, d types.Datum) []byte {
	switch d.K {
	case types.KindNull:
		return append(buf, tagNull)
	case types.KindBool:
		return append(buf, tagBool, byte(d.I))
	case types.KindInt:
		return appendUint64(append(buf, tagInt), uint64(d.I)^(1<<63))
	case types.KindFloat:
		return appendUint64(append(buf, tagFloat), floatKey(d.F))
	case types.KindDecimal:
		// The text form keeps the value exact; order among decimals is
		// only approximated by the float prefix, which is enough for the
		// grouping and lookup that keys serve.
		f, _ := d.D.Float64()
		buf = appendUint64(append(buf, tagDecimal), floatKey(f))
		// Equal numerics must be equal keys: 1.0 and 1.00 encode alike.
		var reduced apd.Decimal
		reduced.Reduce(d.D)
		return appendString(buf, reduced.Text('f'))
	case types.KindString:
		return appendString(append(buf, tagString), d.S)
	case types.KindBytes:
		return appendString(append(buf, tagBytes), d.S)
	case types.KindDate:
		return appendUint64(append(buf, tagDate), uint64(d.I)^(1<<63))
	case types.KindTimestamp:
		return appendTimestamp(buf, d.I)
	case types.KindInterval:
		buf = append(buf, tagInterval)
		buf = appendUint64(buf, uint64(int64(d.Months))^(1<<63))
		buf = appendUint64(buf, uint64(int64(d.Days))^(1<<63))
		return appendUint64(buf, uint64(d.I)^(1<<63))
	case types.KindTime:
		return appendUint64(append(buf, tagTime), uint64(d.I)^(1<<63))
	case types.KindTimeTZ:
		buf = appendUint64(append(buf, tagTimeTZ), uint64(d.I+int64(d.Zone())*1e6)^(1<<63))
		return appendUint64(buf, uint64(int64(d.Zone()))^(1<<63))
	case types.KindUUID:
		if len(d.S) != types.UUIDLen {
			panic(fmt.Sprintf("keyenc: uuid of %d bytes", len(d.S)))
		}
		return append(append(buf, tagUUID), d.S...)
	case types.KindJSON:
		return appendString(append(buf, tagJSON), d.S)
	case types.KindJSONB:
		return appendJSONB(buf, d)
	}
	panic(fmt.Sprintf("keyenc: unknown kind %d", d.K))
}

// AppendCmp appends the key of d for grouping, equality and order as
// PostgreSQL compares values: Append's, but an interval is its span
// (types.Datum.IntervalSpan), so '1 day' and '24:00:00' are one key and
// '1 mon' sorts after '29 days 23:00:00'. Append keeps an interval's
// months, days and microseconds apart (the identity of what prints);
// views of formats before catalog.DataflowIntervalSpans key their state
// by it. A key decodes to an interval equal to d, not necessarily
// written alike (see decodeSpan).
func AppendCmp(buf []byte, d types.Datum) []byte {
	if d.K != types.KindInterval {
		return Append(buf, d)
	}
	days, us := d.IntervalSpan()
	buf = appendUint64(append(buf, tagIntervalSpan), uint64(days)^(1<<63))
	return appendUint64(buf, uint64(us))
}

// AppendRowCmp appends the AppendCmp keys of every datum of row.
func AppendRowCmp(buf []byte, row types.Row) []byte {
	for _, d := range row {
		buf = AppendCmp(buf, d)
	}
	return buf
}

// decodeSpan is the interval of a span key: the days and microseconds
// given the same sign, whole months of 30 days taken out of the days (as
// justify_interval writes it), each part within its field's range.
func decodeSpan(days, us int64) types.Datum {
	if days < 0 && us > 0 {
		days, us = days+1, us-types.UsecsPerDay
	}
	months := min(max(days/30, math.MinInt32), math.MaxInt32)
	rest := days - months*30
	d := min(max(rest, math.MinInt32), math.MaxInt32)
	us += (rest - d) * types.UsecsPerDay
	return types.NewInterval(int32(months), int32(d), us)
}

// AppendValue appends d like Append but keeps what keys deliberately fold
// together (the float -0, equal to 0 as a key, prints as -0): for stored
// rows rather than keys.
func AppendValue(buf []byte, d types.Datum) []byte {
	switch {
	case d.K == types.KindFloat && d.F == 0 && math.Signbit(d.F):
		return append(buf, tagNegZero)
	case d.K == types.KindDecimal:
		// Keep the scale: 1.50 prints as 1.50 (keys reduce it to 1.5).
		f, _ := d.D.Float64()
		buf = appendUint64(append(buf, tagDecimal), floatKey(f))
		// The 'f' text drops a positive exponent (0E+10 prints as
		// 00000000000 and would read back as 0): such a value keeps its
		// exponent form, which Decode reads back exactly.
		if d.D.Exponent > 0 {
			return appendString(buf, d.D.String())
		}
		return appendString(buf, d.D.Text('f'))
	case d.K == types.KindJSONB:
		// Keep the text: numbers keep their scale (keys reduce them).
		return appendString(append(buf, tagJSONBText), d.S)
	}
	return Append(buf, d)
}

// AppendRowValue appends the value encodings of every datum of row.
func AppendRowValue(buf []byte, row types.Row) []byte {
	for _, d := range row {
		buf = AppendValue(buf, d)
	}
	return buf
}

// AppendRow appends the encodings of every datum of row.
func AppendRow(buf []byte, row types.Row) []byte {
	for _, d := range row {
		buf = Append(buf, d)
	}
	return buf
}

// Decode reads one datum from the front of b and returns the rest.
func Decode(b []byte) (types.Datum, []byte, error) {
	if len(b) == 0 {
		return types.Null, nil, fmt.Errorf("keyenc: empty input")
	}
	tag, b := b[0], b[1:]
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("keyenc: truncated key (tag %#x)", tag)
		}
		return nil
	}
	switch tag {
	case tagNull:
		return types.Null, b, nil
	case tagNegZero:
		return types.NewFloat(math.Copysign(0, -1)), b, nil
	case tagBool:
		if err := need(1); err != nil {
			return types.Null, nil, err
		}
		return types.NewBool(b[0] != 0), b[1:], nil
	case tagTimestamp:
		return decodeTimestamp(b)
	case tagInt, tagDate, tagTime:
		if err := need(8); err != nil {
			return types.Null, nil, err
		}
		v := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
		d := types.NewInt(v)
		if tag == tagDate {
			d = types.NewDate(v)
		} else if tag == tagTime {
			d = types.NewTimeOfDay(v)
		}
		return d, b[8:], nil
	case tagFloat:
		if err := need(8); err != nil {
			return types.Null, nil, err
		}
		return types.NewFloat(floatFromKey(binary.BigEndian.Uint64(b))), b[8:], nil
	case tagDecimal:
		if err := need(8); err != nil {
			return types.Null, nil, err
		}
		s, rest, err := decodeString(b[8:])
		if err != nil {
			return types.Null, nil, err
		}
		dec, _, err := apd.NewFromString(s)
		if err != nil {
			return types.Null, nil, fmt.Errorf("keyenc: bad decimal %q", s)
		}
		return types.NewDecimal(dec), rest, nil
	case tagString:
		s, rest, err := decodeString(b)
		if err != nil {
			return types.Null, nil, err
		}
		return types.NewString(s), rest, nil
	case tagBytes:
		s, rest, err := decodeString(b)
		if err != nil {
			return types.Null, nil, err
		}
		return types.NewBytes(s), rest, nil
	case tagJSON, tagJSONBText:
		s, rest, err := decodeString(b)
		if err != nil {
			return types.Null, nil, err
		}
		if tag == tagJSON {
			return types.NewJSONText(s), rest, nil
		}
		return types.Datum{K: types.KindJSONB, S: s}, rest, nil
	case tagJSONB:
		return decodeJSONB(b)
	case tagInterval:
		if err := need(24); err != nil {
			return types.Null, nil, err
		}
		m := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
		dd := int64(binary.BigEndian.Uint64(b[8:]) ^ (1 << 63))
		us := int64(binary.BigEndian.Uint64(b[16:]) ^ (1 << 63))
		return types.NewInterval(int32(m), int32(dd), us), b[24:], nil
	case tagIntervalSpan:
		if err := need(16); err != nil {
			return types.Null, nil, err
		}
		days := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
		us := binary.BigEndian.Uint64(b[8:])
		if us >= uint64(types.UsecsPerDay) {
			return types.Null, nil, fmt.Errorf("keyenc: bad interval span")
		}
		d := decodeSpan(days, int64(us))
		if gd, gu := d.IntervalSpan(); gd != days || gu != int64(us) {
			return types.Null, nil, fmt.Errorf("keyenc: interval span out of range")
		}
		return d, b[16:], nil
	case tagTimeTZ:
		if err := need(16); err != nil {
			return types.Null, nil, err
		}
		utc := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
		zone := int64(binary.BigEndian.Uint64(b[8:]) ^ (1 << 63))
		return types.NewTimeTZ(utc-zone*1e6, int32(zone)), b[16:], nil
	case tagUUID:
		if err := need(types.UUIDLen); err != nil {
			return types.Null, nil, err
		}
		return types.NewUUID(string(b[:types.UUIDLen])), b[types.UUIDLen:], nil
	}
	return types.Null, nil, fmt.Errorf("keyenc: unknown tag %#x", tag)
}

// A timestamp is tagTimestamp, then its microseconds since 1970
// (types.UnixMicros, sign bit flipped), which is what every timestamp was
// stored as before datums counted from 2000, so that keys written then
// and now are the same bytes. The values that form cannot hold
// (types.EndUnixMicros on, the years 294247 to 294276) are the 8 bytes of
// timestampLong, which no value of the short form uses, then the datum's
// own microseconds (sign bit flipped): after every short form, before
// infinity (the greatest short form), in value order among themselves.
// Every int64 has one encoding, in int64 order.
const timestampLong = uint64(math.MaxInt64-1) ^ (1 << 63)

func appendTimestamp(buf []byte, us int64) []byte {
	buf = append(buf, tagTimestamp)
	if unix, ok := types.UnixMicros(us); ok {
		return appendUint64(buf, uint64(unix)^(1<<63))
	}
	return appendUint64(appendUint64(buf, timestampLong), uint64(us)^(1<<63))
}

func decodeTimestamp(b []byte) (types.Datum, []byte, error) {
	if len(b) < 8 {
		return types.Null, nil, fmt.Errorf("keyenc: truncated key (tag %#x)", tagTimestamp)
	}
	u := binary.BigEndian.Uint64(b)
	if u == timestampLong {
		if len(b) < 16 {
			return types.Null, nil, fmt.Errorf("keyenc: truncated key (tag %#x)", tagTimestamp)
		}
		us := int64(binary.BigEndian.Uint64(b[8:]) ^ (1 << 63))
		if _, short := types.UnixMicros(us); short {
			return types.Null, nil, fmt.Errorf("keyenc: timestamp in the long form that has a short one")
		}
		return types.NewTimestamp2000(us), b[16:], nil
	}
	us, ok := types.FromUnixMicros(int64(u ^ (1 << 63)))
	if !ok || (types.TimestampFinite(us) && us >= types.EndUnixMicros) {
		return types.Null, nil, fmt.Errorf("keyenc: timestamp out of range")
	}
	return types.NewTimestamp2000(us), b[8:], nil
}

// DecodeRow decodes n datums from b.
func DecodeRow(b []byte, n int) (types.Row, []byte, error) {
	row := make(types.Row, n)
	for i := range row {
		var err error
		row[i], b, err = Decode(b)
		if err != nil {
			return nil, nil, err
		}
	}
	return row, b, nil
}

func appendUint64(buf []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(buf, v)
}

// floatKey maps a float64 to a uint64 whose unsigned order is the float's
// order (NaN last, as PostgreSQL sorts it).
func floatKey(f float64) uint64 {
	if math.IsNaN(f) {
		return math.MaxUint64
	}
	if f == 0 {
		f = 0 // fold -0 into +0
	}
	u := math.Float64bits(f)
	if u&(1<<63) != 0 {
		return ^u
	}
	return u | (1 << 63)
}

func floatFromKey(u uint64) float64 {
	if u == math.MaxUint64 {
		return math.NaN()
	}
	if u&(1<<63) != 0 {
		return math.Float64frombits(u &^ (1 << 63))
	}
	return math.Float64frombits(^u)
}

// appendString escapes 0x00 as 0x00 0xff and ends with 0x00 0x01, so that a
// string sorts before every longer string that it prefixes.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			buf = append(buf, 0, 0xff)
			continue
		}
		buf = append(buf, c)
	}
	return append(buf, 0, 1)
}

func decodeString(b []byte) (string, []byte, error) {
	out := make([]byte, 0, 16)
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case 1:
			return string(out), b[i+2:], nil
		case 0xff:
			out = append(out, 0)
			i++
			continue
		}
		break
	}
	return "", nil, fmt.Errorf("keyenc: unterminated string")
}
