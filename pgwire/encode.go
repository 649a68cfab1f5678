package pgwire

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// rowDescription describes cols; formats holds one format code per column
// (nil means text for all), origins one origin per column (nil: none).
func rowDescription(cols []types.Column, formats []int16, origins []ColumnOrigin) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		f := formatText
		if formats != nil {
			f = formats[i]
		}
		fields[i] = pgproto3.FieldDescription{
			Name:         []byte(col.Name),
			DataTypeOID:  col.OID(),
			DataTypeSize: col.Type.Size(),
			TypeModifier: typmod(col),
			Format:       f,
		}
		if i < len(origins) {
			fields[i].TableOID = origins[i].TableOID
			fields[i].TableAttributeNumber = uint16(origins[i].Attr)
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// appendDataRow appends a complete DataRow message for row to dst. formats
// holds one format code per column (nil means text for all). On error dst
// is returned unchanged.
func appendDataRow(dst []byte, row types.Row, cols []types.Column, formats []int16) ([]byte, error) {
	if len(row) != len(cols) {
		return dst, sqlerr.New(sqlerr.InternalError, "row has %d values but the statement has %d columns", len(row), len(cols))
	}
	start := len(dst)
	dst = append(dst, 'D', 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(row)))
	for i, d := range row {
		if d.IsNull() {
			dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32) // length -1
			continue
		}
		lenAt := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		if formats != nil && formats[i] == formatBinary {
			var err error
			if cols[i].Mod.Fixed && d.K == types.KindString {
				d = types.NewString(types.PadFixed(d.S, cols[i].Mod))
			}
			if dst, err = appendBinary(dst, d, cols[i].Type); err != nil {
				return dst[:start], err
			}
		} else {
			dst = append(dst, types.FormatColumn(d, cols[i])...)
		}
		binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	}
	binary.BigEndian.PutUint32(dst[start+1:], uint32(len(dst)-start-1))
	return dst, nil
}

// appendBinary appends the binary wire form of the non-NULL datum d as a
// value of column type t. Datum kinds that the engine may legitimately
// produce for t (an integer for a float column, a date for a timestamp...)
// are converted.
func appendBinary(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	if t.IsArray() && d.K == types.KindString {
		return appendBinaryArray(dst, d, t)
	}
	switch t {
	case types.Bool:
		if d.K != types.KindBool {
			break
		}
		if d.Bool() {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil

	case types.Int2, types.Int4, types.Int8:
		i, ok := datumInt(d)
		if !ok {
			break
		}
		if _, err := types.CheckIntRange(i, t); err != nil {
			return dst, inputError(err)
		}
		switch t {
		case types.Int2:
			return binary.BigEndian.AppendUint16(dst, uint16(i)), nil
		case types.Int4:
			return binary.BigEndian.AppendUint32(dst, uint32(i)), nil
		}
		return binary.BigEndian.AppendUint64(dst, uint64(i)), nil

	case types.Float4, types.Float8:
		if d.K != types.KindInt && d.K != types.KindFloat && d.K != types.KindDecimal {
			break
		}
		f := d.Float()
		if t == types.Float4 {
			bits := math.Float32bits(float32(f))
			if math.IsNaN(f) {
				bits = float4NaNBits | bits&(1<<31)
			}
			return binary.BigEndian.AppendUint32(dst, bits), nil
		}
		bits := math.Float64bits(f)
		if math.IsNaN(f) {
			bits = float8NaNBits | bits&(1<<63)
		}
		return binary.BigEndian.AppendUint64(dst, bits), nil

	case types.Numeric:
		if d.K != types.KindInt && d.K != types.KindFloat && d.K != types.KindDecimal {
			break
		}
		return appendNumeric(dst, d.Decimal())

	case types.Bytea:
		if d.K == types.KindBytes {
			return append(dst, d.S...), nil
		}

	case types.UUID:
		if d.K == types.KindUUID {
			return append(dst, d.S...), nil // uuid_send
		}

	case types.Unknown, types.Text, types.Varchar:
		if d.K == types.KindString {
			return append(dst, d.S...), nil
		}
		return append(dst, types.FormatText(d, t)...), nil

	case types.JSON:
		return append(dst, d.S...), nil

	case types.JSONB:
		// jsonb_send: a version byte, then the text.
		return append(append(dst, 1), d.S...), nil

	case types.Date:
		var days int64
		switch d.K {
		case types.KindDate:
			days = d.I
		case types.KindTimestamp:
			days = d.I
			if types.TimestampFinite(d.I) {
				days = types.DaysOfTimestamp(d.I)
			} else if d.I > 0 {
				days = types.DateInfinity
			} else {
				days = types.DateNegInfinity
			}
		default:
			return dst, mismatch(d, t)
		}
		v, ok := dateToWire(days)
		if !ok {
			return dst, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range")
		}
		return binary.BigEndian.AppendUint32(dst, uint32(v)), nil

	case types.Timestamp, types.Timestamptz:
		var us int64
		switch d.K {
		case types.KindTimestamp:
			us = d.I
		case types.KindDate:
			switch {
			case d.I == types.DateInfinity:
				us = types.TimestampInfinity
			case d.I == types.DateNegInfinity:
				us = types.TimestampNegInfinity
			case d.I < types.MinDateDays || d.I >= types.DaysOfTimestamp(types.EndTimestampMicros):
				return dst, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
			default:
				us = types.TimestampOfDays(d.I)
			}
		default:
			return dst, mismatch(d, t)
		}
		return binary.BigEndian.AppendUint64(dst, uint64(us)), nil

	case types.Interval:
		if d.K != types.KindInterval {
			break
		}
		dst = binary.BigEndian.AppendUint64(dst, uint64(d.I))
		dst = binary.BigEndian.AppendUint32(dst, uint32(d.Days))
		return binary.BigEndian.AppendUint32(dst, uint32(d.Months)), nil

	case types.Time, types.TimeTZ:
		// int64 microseconds; timetz then its zone as int32 seconds west.
		if d.K != types.KindTime && d.K != types.KindTimeTZ {
			break
		}
		dst = binary.BigEndian.AppendUint64(dst, uint64(d.I))
		if t == types.TimeTZ {
			dst = binary.BigEndian.AppendUint32(dst, uint32(d.Zone()))
		}
		return dst, nil
	}
	return dst, mismatch(d, t)
}

// The NaN that PostgreSQL sends in binary is C's NAN, the quiet NaN with no
// payload, with the sign that arithmetic left (0 * Infinity is negative
// on x86, as -'NaN' is); Go's math.NaN() has a payload bit set, dropped.
const (
	float8NaNBits uint64 = 0x7ff8000000000000
	float4NaNBits uint32 = 0x7fc00000
)

// datumInt returns a numeric datum as an integer, rounding fractions as
// PostgreSQL's casts do (floats half to even, numerics half away from zero).
func datumInt(d types.Datum) (int64, bool) {
	switch d.K {
	case types.KindInt:
		return d.I, true
	case types.KindDecimal:
		var r apd.Decimal
		if _, err := apd.BaseContext.RoundToIntegralValue(&r, d.D); err != nil {
			return 0, false
		}
		i, err := r.Int64()
		return i, err == nil
	case types.KindFloat:
		f := math.RoundToEven(d.F)
		if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

func mismatch(d types.Datum, t types.Type) error {
	return sqlerr.New(sqlerr.InternalError, "cannot encode a value of kind %d as %s", d.K, t)
}
