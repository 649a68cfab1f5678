package pgwire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"streamdb/sqlerr"
	"streamdb/types"
)

// Wire format codes.
const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

// formatCodes expands the format codes of a Bind message to one per value,
// following the protocol: no code means text for all, one code applies to
// all, otherwise there is one code per value. what names the values in
// the error message ("parameter" or "result").
func formatCodes(codes []int16, n int, what string) ([]int16, error) {
	for _, f := range codes {
		if f != formatText && f != formatBinary {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
	}
	switch {
	case len(codes) == 0:
		return nil, nil
	case len(codes) == n:
		return codes, nil
	case len(codes) == 1:
		out := make([]int16, n)
		for i := range out {
			out[i] = codes[0]
		}
		return out, nil
	}
	return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message has %d %s formats but %d %ss", len(codes), what, n, what)
}

// decodeParams converts the parameter values of a Bind message to datums of
// the statement's parameter types.
func decodeParams(paramTypes []types.Type, codes []int16, values [][]byte) ([]types.Datum, error) {
	formats, err := formatCodes(codes, len(values), "parameter")
	if err != nil {
		return nil, err
	}
	out := make([]types.Datum, len(values))
	for i, v := range values {
		if v == nil {
			continue // NULL
		}
		if formats != nil && formats[i] == formatBinary {
			out[i], err = decodeBinary(v, paramTypes[i])
			if err != nil {
				return nil, err
			}
			continue
		}
		if !utf8.Valid(v) {
			return nil, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\" in parameter $%d", i+1)
		}
		if out[i], err = types.ParseText(string(v), paramTypes[i]); err != nil {
			return nil, inputError(err)
		}
	}
	return out, nil
}

// decodeBinary converts one binary-format parameter value to a datum of
// type t.
func decodeBinary(b []byte, t types.Type) (types.Datum, error) {
	bad := func() (types.Datum, error) {
		return types.Null, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format for type %s (%d bytes)", t, len(b))
	}
	if t.IsArray() {
		return decodeBinaryArray(b, t)
	}
	switch t {
	case types.Bool:
		if len(b) != 1 {
			return bad()
		}
		return types.NewBool(b[0] != 0), nil

	case types.Int2, types.Int4, types.Int8:
		// Any integer width is accepted: the client may have encoded the
		// value with the type it declared rather than the one resolved.
		var i int64
		switch len(b) {
		case 2:
			i = int64(int16(binary.BigEndian.Uint16(b)))
		case 4:
			i = int64(int32(binary.BigEndian.Uint32(b)))
		case 8:
			i = int64(binary.BigEndian.Uint64(b))
		default:
			return bad()
		}
		d, err := types.CheckIntRange(i, t)
		if err != nil {
			return types.Null, inputError(err)
		}
		return d, nil

	case types.Float4, types.Float8:
		var f float64
		switch len(b) {
		case 4:
			f = float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
		case 8:
			f = math.Float64frombits(binary.BigEndian.Uint64(b))
		default:
			return bad()
		}
		if t == types.Float4 {
			f = float64(float32(f))
		}
		return types.NewFloat(f), nil

	case types.Numeric:
		d, ok := decodeNumeric(b)
		if !ok {
			return bad()
		}
		return types.NewDecimal(d), nil

	case types.Bytea:
		return types.NewBytes(string(b)), nil

	case types.UUID:
		// uuid_recv: the 16 bytes as they are.
		if len(b) != types.UUIDLen {
			return bad()
		}
		return types.NewUUID(string(b)), nil
	case types.JSON, types.JSONB:
		if t == types.JSONB {
			// jsonb_recv: a version byte, then the text.
			if len(b) == 0 || b[0] != 1 {
				return types.Null, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "unsupported jsonb version number").
					WithHint("Send jsonb in binary as the byte 1 followed by the JSON text, or send it as text.")
			}
			b = b[1:]
		}
		if !utf8.Valid(b) {
			return types.Null, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
		}
		return types.ParseText(string(b), t)

	case types.Unknown, types.Text, types.Varchar:
		if !utf8.Valid(b) {
			return types.Null, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
		}
		return types.NewString(string(b)), nil

	case types.Date:
		if len(b) != 4 {
			return bad()
		}
		return dateFromWire(int32(binary.BigEndian.Uint32(b))), nil

	case types.Timestamp, types.Timestamptz:
		if len(b) != 8 {
			return bad()
		}
		d, ok := timestampFromWire(int64(binary.BigEndian.Uint64(b)))
		if !ok {
			return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		return d, nil

	case types.Interval:
		if len(b) != 16 {
			return bad()
		}
		return types.NewInterval(
			int32(binary.BigEndian.Uint32(b[12:])),
			int32(binary.BigEndian.Uint32(b[8:])),
			int64(binary.BigEndian.Uint64(b)),
		), nil

	case types.Time, types.TimeTZ:
		// PostgreSQL's time_recv and timetz_recv (their range errors are
		// 22007).
		if len(b) != int(t.Size()) {
			return bad()
		}
		us := int64(binary.BigEndian.Uint64(b))
		if !types.ValidTimeOfDay(us) {
			return types.Null, sqlerr.New(sqlerr.InvalidDatetimeFormat, "time out of range")
		}
		if t == types.Time {
			return types.NewTimeOfDay(us), nil
		}
		zone := int32(binary.BigEndian.Uint32(b[8:]))
		if !types.ValidZone(int64(zone)) {
			return types.Null, sqlerr.New(sqlerr.InvalidDatetimeFormat, "time zone displacement out of range")
		}
		return types.NewTimeTZ(us, zone), nil
	}
	return bad()
}
