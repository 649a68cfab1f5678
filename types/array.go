package types

import (
	"strings"

	"streamdb/sqlerr"
)

// Arrays. An array type is its element type with arrayBit set: int4[] is
// ArrayOf(Int4). Only one-dimensional arrays of the base types exist.
//
// An array value is a KindString datum holding the array's canonical text
// form, as PostgreSQL's array_out prints it ('{1,2,NULL}', '{a,"b c"}'):
// every element in its type's output form, quoted where array_out quotes.
// So arrays travel through storage, hashing and the wire like strings,
// and two equal arrays of the same type have the same text (element types
// whose equal values print differently, numeric 1.0 and 1.00, are the
// exception). Operators that must see elements (comparison, @>, ||) parse
// the text; see package expr.
const arrayBit Type = 0x40

// ArrayOf returns the type of one-dimensional arrays of elem.
func ArrayOf(elem Type) Type { return elem&^arrayBit | arrayBit }

// IsArray reports whether t is an array type.
func (t Type) IsArray() bool { return t&arrayBit != 0 }

// Elem returns an array type's element type (t itself for other types).
func (t Type) Elem() Type { return t &^ arrayBit }

// arrayOIDs are pg_type's OIDs of the array types (typarray of each
// element type).
var arrayOIDs = map[Type]uint32{
	Unknown: 1009, Bool: 1000, Int2: 1005, Int4: 1007, Int8: 1016, Float4: 1021,
	Float8: 1022, Numeric: 1231, Text: 1009, Varchar: 1015, Date: 1182,
	Timestamp: 1115, Timestamptz: 1185, Interval: 1187, Bytea: 1001,
	Time: 1183, TimeTZ: 1270, UUID: 2951,
}

// arrayFromOID maps an array type OID to its type.
func arrayFromOID(oid uint32) (Type, bool) {
	if oid == 1014 { // character(n)[]
		return ArrayOf(Varchar), true
	}
	for elem, o := range arrayOIDs {
		if o == oid && elem != Unknown {
			return ArrayOf(elem), true
		}
	}
	return Unknown, false
}

// parseArrayName reads an array type name: elem[] (elem[3], elem[][] are
// one-dimensional here as in PostgreSQL, which ignores declared sizes) or
// PostgreSQL's internal _elem. ok is false for other names.
func parseArrayName(n string) (Type, bool) {
	var base string
	switch {
	case strings.HasSuffix(n, "]"):
		i := strings.IndexByte(n, '[')
		if i <= 0 {
			return Unknown, false
		}
		base = strings.TrimSpace(n[:i])
	case strings.HasPrefix(n, "_") && len(n) > 1:
		base = n[1:]
	default:
		return Unknown, false
	}
	elem, err := Parse(base)
	if err != nil || elem.IsArray() {
		return Unknown, false
	}
	return ArrayOf(elem), true
}

// ParseArray reads an array's text form (array_in): each element is read
// as a value of elem and the result is the canonical text form.
func ParseArray(s string, elem Type) (Datum, error) {
	parts, err := SplitArray(s)
	if err != nil {
		return Null, err
	}
	for i, p := range parts {
		if p.IsNull() {
			continue
		}
		v, err := ParseText(p.S, elem)
		if err != nil {
			return Null, err
		}
		parts[i] = NewString(FormatText(v, elem))
	}
	return NewString(FormatArray(parts)), nil
}

// FormatArray is array_out: the text form of an array whose elements are
// given in their text forms (NULL elements as NULL datums).
func FormatArray(elems []Datum) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case e.IsNull():
			b.WriteString("NULL")
		case needsArrayQuotes(e.S):
			b.WriteByte('"')
			for _, c := range e.S {
				if c == '"' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteRune(c)
			}
			b.WriteByte('"')
		default:
			b.WriteString(e.S)
		}
	}
	b.WriteByte('}')
	return b.String()
}

func needsArrayQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "null") {
		return true
	}
	return strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f")
}

func isArraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// SplitArray reads the text form of a one-dimensional array into its
// elements' text forms, NULL elements as NULL datums. Quoting and
// backslash escapes follow array_in; a nested array is refused with
// 0A000, a malformed literal with 22P02 as PostgreSQL words it.
func SplitArray(s string) ([]Datum, error) {
	i := 0
	for i < len(s) && isArraySpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '[' {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "array bounds are not supported: %q", s).
			WithHint("Write the array without dimension decoration, as '{a,b}'.")
	}
	if i >= len(s) || s[i] != '{' {
		return nil, malformedArray(s, "Array value must start with \"{\" or dimension information.")
	}
	i++
	var out []Datum
	for first := true; ; first = false {
		for i < len(s) && isArraySpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return nil, malformedArray(s, "Unexpected end of input.")
		}
		if first && s[i] == '}' {
			i++
			break
		}
		if s[i] == '{' {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported: %q", s).
				WithHint("streamdb's arrays have one dimension.")
		}
		var b strings.Builder
		quoted, escaped := false, false
		if s[i] == '"' {
			quoted = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, malformedArray(s, "Unexpected end of input.")
			}
			i++
			for i < len(s) && isArraySpace(s[i]) {
				i++
			}
		} else {
			trail := 0 // unescaped trailing spaces, which are not part of the element
			for ; i < len(s) && s[i] != ',' && s[i] != '}'; i++ {
				switch c := s[i]; {
				case c == '"' || c == '{':
					return nil, malformedArray(s, "Unexpected \""+string(c)+"\" character.")
				case c == '\\' && i+1 < len(s):
					i++
					escaped = true
					trail = 0
				case isArraySpace(c):
					trail++
				default:
					trail = 0
				}
				b.WriteByte(s[i])
			}
			if b.Len() == 0 {
				if i < len(s) {
					return nil, malformedArray(s, "Unexpected \""+string(s[i])+"\" character.")
				}
				return nil, malformedArray(s, "Unexpected end of input.")
			}
			v := b.String()
			b.Reset()
			b.WriteString(v[:len(v)-trail])
		}
		v := b.String()
		if !quoted && !escaped && strings.EqualFold(v, "null") {
			out = append(out, Null)
		} else {
			out = append(out, NewString(v))
		}
		if i >= len(s) {
			return nil, malformedArray(s, "Unexpected end of input.")
		}
		if s[i] == '}' {
			i++
			break
		}
		if s[i] != ',' {
			return nil, malformedArray(s, "Expected \",\" or \"}\".")
		}
		i++
	}
	for ; i < len(s); i++ {
		if !isArraySpace(s[i]) {
			return nil, malformedArray(s, "Junk after closing right brace.")
		}
	}
	return out, nil
}

func malformedArray(s, detail string) error {
	e := sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: \"%s\"", s)
	e.Detail = detail
	return e
}
