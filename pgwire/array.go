package pgwire

import (
	"encoding/binary"
	"math"

	"streamdb/sqlerr"
	"streamdb/types"
)

// The binary form of a one-dimensional array (array_send / array_recv):
// ndim, has-NULLs flag, element type OID, then per dimension its length
// and lower bound, then each element as a length (-1 for NULL) and the
// element's own binary form. An empty array has no dimensions.

// appendBinaryArray appends the binary form of the array value d (its
// canonical text form) of array type t.
func appendBinaryArray(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	elem := t.Elem()
	parts, err := types.SplitArray(d.S)
	if err != nil {
		return dst, err
	}
	hasNull := uint32(0)
	for _, p := range parts {
		if p.IsNull() {
			hasNull = 1
		}
	}
	ndim := uint32(1)
	if len(parts) == 0 {
		ndim = 0
	}
	dst = binary.BigEndian.AppendUint32(dst, ndim)
	dst = binary.BigEndian.AppendUint32(dst, hasNull)
	dst = binary.BigEndian.AppendUint32(dst, elem.OID())
	if ndim == 1 {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(parts)))
		dst = binary.BigEndian.AppendUint32(dst, 1)
	}
	for _, p := range parts {
		if p.IsNull() {
			dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32)
			continue
		}
		v, err := types.ParseText(p.S, elem)
		if err != nil {
			return dst, inputError(err)
		}
		lenAt := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		if dst, err = appendBinary(dst, v, elem); err != nil {
			return dst, err
		}
		binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	}
	return dst, nil
}

// decodeBinaryArray reads a binary array parameter of array type t into
// its canonical text form. Any element type OID is accepted, as for
// scalars the client may have encoded with the type it declared: each
// element is decoded as t's element type.
func decodeBinaryArray(b []byte, t types.Type) (types.Datum, error) {
	bad := func() (types.Datum, error) {
		return types.Null, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format for type %s (%d bytes)", t, len(b))
	}
	u32 := func() (uint32, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v := binary.BigEndian.Uint32(b)
		b = b[4:]
		return v, true
	}
	ndim, ok1 := u32()
	_, ok2 := u32() // has-NULLs flag
	_, ok3 := u32() // element OID
	if !ok1 || !ok2 || !ok3 {
		return bad()
	}
	n := uint32(0)
	switch ndim {
	case 0:
	case 1:
		var ok bool
		if n, ok = u32(); !ok {
			return bad()
		}
		if lb, ok := u32(); !ok || lb != 1 {
			if !ok {
				return bad()
			}
			return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "array lower bounds other than 1 are not supported")
		}
	default:
		return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported").
			WithHint("streamdb's arrays have one dimension.")
	}
	if uint64(n)*4 > uint64(len(b)) {
		return bad()
	}
	elem := t.Elem()
	parts := make([]types.Datum, n)
	for i := range parts {
		l, ok := u32()
		if !ok {
			return bad()
		}
		if l == math.MaxUint32 {
			continue
		}
		if uint64(l) > uint64(len(b)) {
			return bad()
		}
		v, err := decodeBinary(b[:l], elem)
		if err != nil {
			return types.Null, err
		}
		b = b[l:]
		parts[i] = types.NewString(types.FormatText(v, elem))
	}
	if len(b) != 0 {
		return bad()
	}
	return types.NewString(types.FormatArray(parts)), nil
}
