// Package types defines streamdb's SQL types and the Datum value that every
// layer (wire protocol, expressions, operators, storage) passes around.
package types

import (
	"fmt"
	"strings"
)

// Type is a SQL column type. Its zero value, Unknown, is the type of a NULL
// literal or a parameter whose type could not be inferred.
type Type uint8

const (
	Unknown Type = iota
	Bool
	Int2
	Int4
	Int8
	Float4
	Float8
	Numeric
	Text
	Varchar
	Date
	Timestamp
	Timestamptz
	Interval
	Bytea
	Time   // time [without time zone]
	TimeTZ // time with time zone
	UUID
	JSON
	JSONB
)

// PostgreSQL type OIDs, so that drivers decode values natively.
const (
	OIDBool        uint32 = 16
	OIDBytea       uint32 = 17
	OIDInt8        uint32 = 20
	OIDInt2        uint32 = 21
	OIDInt4        uint32 = 23
	OIDText        uint32 = 25
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDUnknown     uint32 = 705
	OIDVarchar     uint32 = 1043
	OIDDate        uint32 = 1082
	OIDTime        uint32 = 1083
	OIDTimestamp   uint32 = 1114
	OIDTimestamptz uint32 = 1184
	OIDInterval    uint32 = 1186
	OIDTimeTZ      uint32 = 1266
	OIDNumeric     uint32 = 1700
	OIDUUID        uint32 = 2950
	OIDJSON        uint32 = 114
	OIDJSONB       uint32 = 3802
)

var typeInfo = [...]struct {
	name string
	oid  uint32
	size int16 // pg_type.typlen
}{
	Unknown:     {"unknown", OIDText, -1},
	Bool:        {"boolean", OIDBool, 1},
	Int2:        {"smallint", OIDInt2, 2},
	Int4:        {"integer", OIDInt4, 4},
	Int8:        {"bigint", OIDInt8, 8},
	Float4:      {"real", OIDFloat4, 4},
	Float8:      {"double precision", OIDFloat8, 8},
	Numeric:     {"numeric", OIDNumeric, -1},
	Text:        {"text", OIDText, -1},
	Varchar:     {"character varying", OIDVarchar, -1},
	Date:        {"date", OIDDate, 4},
	Timestamp:   {"timestamp without time zone", OIDTimestamp, 8},
	Timestamptz: {"timestamp with time zone", OIDTimestamptz, 8},
	Interval:    {"interval", OIDInterval, 16},
	Bytea:       {"bytea", OIDBytea, -1},
	Time:        {"time without time zone", OIDTime, 8},
	TimeTZ:      {"time with time zone", OIDTimeTZ, 12},
	UUID:        {"uuid", OIDUUID, 16},
	JSON:        {"json", OIDJSON, -1},
	JSONB:       {"jsonb", OIDJSONB, -1},
}

// String returns the PostgreSQL name of the type (as format_type prints it).
func (t Type) String() string {
	if t.IsArray() {
		return typeInfo[t.Elem()].name + "[]"
	}
	return typeInfo[t].name
}

// OID returns the PostgreSQL type OID. Unknown maps to text.
func (t Type) OID() uint32 {
	if t.IsArray() {
		return arrayOIDs[t.Elem()]
	}
	return typeInfo[t].oid
}

// Size returns pg_type.typlen: the fixed width in bytes, or -1.
func (t Type) Size() int16 {
	if t.IsArray() {
		return -1
	}
	return typeInfo[t].size
}

// IsInteger reports whether t is SMALLINT, INT or BIGINT.
func (t Type) IsInteger() bool { return t == Int2 || t == Int4 || t == Int8 }

// IsNumeric reports whether t is any number type.
func (t Type) IsNumeric() bool { return t.IsInteger() || t == Float4 || t == Float8 || t == Numeric }

// IsString reports whether t is TEXT or VARCHAR.
func (t Type) IsString() bool { return t == Text || t == Varchar }

// IsTime reports whether t is TIMESTAMP or TIMESTAMPTZ.
func (t Type) IsTime() bool { return t == Timestamp || t == Timestamptz }

// IsTimeOfDay reports whether t is TIME or TIMETZ.
func (t Type) IsTimeOfDay() bool { return t == Time || t == TimeTZ }

// FromOID maps a PostgreSQL type OID to a Type; ok is false for OIDs streamdb
// does not support.
func FromOID(oid uint32) (Type, bool) {
	for t, info := range typeInfo {
		if Type(t) != Unknown && info.oid == oid {
			return Type(t), true
		}
	}
	if oid == 0 || oid == OIDUnknown {
		return Unknown, true
	}
	if oid == OIDBpchar {
		return Varchar, true // character(n) values are strings
	}
	return arrayFromOID(oid)
}

// Parse maps a SQL type name as users write it (PostgreSQL and RisingWave
// spellings, any case, with or without a length such as VARCHAR(20)) to a Type.
func Parse(name string) (Type, error) {
	n := strings.ToLower(strings.Join(strings.Fields(name), " "))
	if t, ok := parseArrayName(n); ok {
		return t, nil
	}
	if i := strings.IndexByte(n, '('); i >= 0 {
		// The modifier may stand inside the name: "time(3) with time zone".
		rest := ""
		if j := strings.IndexByte(n[i:], ')'); j >= 0 {
			rest = n[i+j+1:]
		}
		n = strings.TrimSpace(strings.TrimSpace(n[:i]) + " " + strings.TrimSpace(rest))
	}
	switch n {
	case "bool", "boolean":
		return Bool, nil
	case "smallint", "int2":
		return Int2, nil
	case "int", "integer", "int4":
		return Int4, nil
	case "bigint", "int8":
		return Int8, nil
	case "real", "float4":
		return Float4, nil
	case "double precision", "double", "float8", "float":
		return Float8, nil
	case "numeric", "decimal":
		return Numeric, nil
	case "text", "string":
		return Text, nil
	case "varchar", "character varying", "char", "character", "bpchar":
		return Varchar, nil
	case "date":
		return Date, nil
	case "timestamp", "timestamp without time zone", "datetime":
		return Timestamp, nil
	case "timestamptz", "timestamp with time zone":
		return Timestamptz, nil
	case "interval":
		return Interval, nil
	case "bytea":
		return Bytea, nil
	case "time", "time without time zone":
		return Time, nil
	case "timetz", "time with time zone":
		return TimeTZ, nil
	case "uuid":
		return UUID, nil
	case "json":
		return JSON, nil
	case "jsonb":
		return JSONB, nil
	}
	return Unknown, fmt.Errorf("type %q does not exist", name)
}
