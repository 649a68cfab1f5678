package keyenc

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// jsonb keys. A jsonb key (tagJSONB) is the value's structure in jsonb's
// btree order (types.CompareJSONB): at the top an empty array, then
// scalars ("raw scalars"), then other arrays, then objects; inside,
// one byte per kind in jsonb's order of kinds, then the value: a string
// escaped as appendString, a number as a float key then its reduced text
// (so 1.0 and 1 are one key; among numbers the order is the float's,
// exact but for numbers that round to the same float), an array or object
// its member count then its members (keys in storage order). Every part is
// prefix-free, so the byte order is the value order. A key decodes to the
// jsonb value with its numbers reduced (1.0 reads back as 1).
//
// A stored jsonb value (AppendValue, tagJSONBText) is its canonical text,
// and a json value (tagJSON) its text as given, in both encodings: json
// has no order of its own.
const (
	tagJSON       = 0x32
	tagJSONB      = 0x62
	tagJSONBText  = 0x63
	jsonTopEmpty  = 0x10
	jsonTopScalar = 0x20
	jsonTopArray  = 0x30
	jsonTopObject = 0x40
	jsonNull      = 0x01
	jsonString    = 0x02
	jsonNumber    = 0x03
	jsonFalse     = 0x04
	jsonTrue      = 0x05
	jsonArray     = 0x06
	jsonObject    = 0x07
)

func appendJSONB(buf []byte, d types.Datum) []byte {
	v, err := types.JSONOf(d)
	if err != nil {
		// Not reachable for datums made by types: keep the text.
		return appendString(append(buf, tagJSONBText), d.S)
	}
	buf = append(buf, tagJSONB)
	switch {
	case v.Kind == types.JSONArray && len(v.Elems) == 0:
		return append(buf, jsonTopEmpty)
	case v.Kind == types.JSONArray:
		buf = append(buf, jsonTopArray)
	case v.Kind == types.JSONObject:
		buf = append(buf, jsonTopObject)
	default:
		buf = append(buf, jsonTopScalar)
	}
	return appendJSONValue(buf, v)
}

func appendJSONValue(buf []byte, v *types.JSONValue) []byte {
	switch v.Kind {
	case types.JSONNull:
		return append(buf, jsonNull)
	case types.JSONString:
		return appendString(append(buf, jsonString), v.Str)
	case types.JSONNumber:
		f, _ := v.Num.Float64()
		buf = appendUint64(append(buf, jsonNumber), floatKey(f))
		var reduced apd.Decimal
		reduced.Reduce(v.Num)
		return appendString(buf, reduced.Text('f'))
	case types.JSONBool:
		if v.Bool {
			return append(buf, jsonTrue)
		}
		return append(buf, jsonFalse)
	case types.JSONArray:
		buf = binary.BigEndian.AppendUint32(append(buf, jsonArray), uint32(len(v.Elems)))
		for _, e := range v.Elems {
			buf = appendJSONValue(buf, e)
		}
		return buf
	default:
		buf = binary.BigEndian.AppendUint32(append(buf, jsonObject), uint32(len(v.Keys)))
		for i, k := range v.Keys {
			buf = appendString(buf, k)
			buf = appendJSONValue(buf, v.Vals[i])
		}
		return buf
	}
}

// decodeJSONB reads a jsonb key after its tag.
func decodeJSONB(b []byte) (types.Datum, []byte, error) {
	if len(b) == 0 {
		return types.Null, nil, fmt.Errorf("keyenc: truncated jsonb key")
	}
	top, b := b[0], b[1:]
	if top == jsonTopEmpty {
		return types.NewJSONB(&types.JSONValue{Kind: types.JSONArray}), b, nil
	}
	if top != jsonTopScalar && top != jsonTopArray && top != jsonTopObject {
		return types.Null, nil, fmt.Errorf("keyenc: bad jsonb key")
	}
	v, rest, err := decodeJSONValue(b, 0)
	if err != nil {
		return types.Null, nil, err
	}
	return types.NewJSONB(v), rest, nil
}

func decodeJSONValue(b []byte, depth int) (*types.JSONValue, []byte, error) {
	if len(b) == 0 || depth > types.MaxJSONDepth {
		return nil, nil, fmt.Errorf("keyenc: bad jsonb key")
	}
	tag, b := b[0], b[1:]
	switch tag {
	case jsonNull:
		return types.JSONNullValue(), b, nil
	case jsonFalse, jsonTrue:
		return types.JSONBoolValue(tag == jsonTrue), b, nil
	case jsonString:
		s, rest, err := decodeString(b)
		if err != nil {
			return nil, nil, err
		}
		return types.JSONStringValue(s), rest, nil
	case jsonNumber:
		if len(b) < 8 {
			return nil, nil, fmt.Errorf("keyenc: truncated jsonb key")
		}
		s, rest, err := decodeString(b[8:])
		if err != nil {
			return nil, nil, err
		}
		d, _, err := apd.NewFromString(s)
		if err != nil {
			return nil, nil, fmt.Errorf("keyenc: bad jsonb number %q", s)
		}
		return types.JSONNumberValue(d), rest, nil
	case jsonArray, jsonObject:
		if len(b) < 4 {
			return nil, nil, fmt.Errorf("keyenc: truncated jsonb key")
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) { // every member takes a byte at least
			return nil, nil, fmt.Errorf("keyenc: bad jsonb key")
		}
		v := &types.JSONValue{Kind: types.JSONArray}
		if tag == jsonObject {
			v.Kind = types.JSONObject
		}
		for i := uint32(0); i < n; i++ {
			if tag == jsonObject {
				k, rest, err := decodeString(b)
				if err != nil {
					return nil, nil, err
				}
				v.Keys = append(v.Keys, k)
				b = rest
			}
			e, rest, err := decodeJSONValue(b, depth+1)
			if err != nil {
				return nil, nil, err
			}
			b = rest
			if tag == jsonObject {
				v.Vals = append(v.Vals, e)
			} else {
				v.Elems = append(v.Elems, e)
			}
		}
		return v, b, nil
	}
	return nil, nil, fmt.Errorf("keyenc: bad jsonb key")
}
