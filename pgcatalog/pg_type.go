package pgcatalog

import "streamdb/types"

// pg_type: the base types streamdb has, their array types, and the few
// other types the catalogs' own columns use (oid, name, char, regclass,
// regproc, regtype, int2vector, oidvector). OIDs, names, lengths and
// categories are PostgreSQL 15's, so that drivers that cache pg_type by OID
// (pgjdbc, psycopg, SQLAlchemy) agree with what they know built in.

// Type is one row of pg_type.
type Type struct {
	OID      int64
	Name     string
	Len      int64
	Category string // typcategory
	Elem     int64  // typelem: the element type of an array
	Array    int64  // typarray: the array type of this type
	Input    string // typinput's function name
	ByVal    bool
}

// Types lists every type pg_type shows, base types first.
var Types = func() []Type {
	base := []Type{
		{16, "bool", 1, "B", 0, 1000, "boolin", true},
		{17, "bytea", -1, "U", 0, 1001, "byteain", false},
		{18, "char", 1, "Z", 0, 1002, "charin", true},
		{19, "name", 64, "S", 18, 1003, "namein", false},
		{20, "int8", 8, "N", 0, 1016, "int8in", true},
		{21, "int2", 2, "N", 0, 1005, "int2in", true},
		{22, "int2vector", -1, "A", 21, 1006, "int2vectorin", false},
		{23, "int4", 4, "N", 0, 1007, "int4in", true},
		{24, "regproc", 4, "N", 0, 1008, "regprocin", true},
		{25, "text", -1, "S", 0, 1009, "textin", false},
		{26, "oid", 4, "N", 0, 1028, "oidin", true},
		{30, "oidvector", -1, "A", 26, 1013, "oidvectorin", false},
		{700, "float4", 4, "N", 0, 1021, "float4in", true},
		{701, "float8", 8, "N", 0, 1022, "float8in", true},
		{1043, "varchar", -1, "S", 0, 1015, "varcharin", false},
		{1082, "date", 4, "D", 0, 1182, "date_in", true},
		{1083, "time", 8, "D", 0, 1183, "time_in", true},
		{1114, "timestamp", 8, "D", 0, 1115, "timestamp_in", true},
		{1184, "timestamptz", 8, "D", 0, 1185, "timestamptz_in", true},
		{1186, "interval", 16, "T", 0, 1187, "interval_in", false},
		{1266, "timetz", 12, "D", 0, 1270, "timetz_in", false},
		{1700, "numeric", -1, "N", 0, 1231, "numeric_in", false},
		{2205, "regclass", 4, "N", 0, 2210, "regclassin", true},
		{2206, "regtype", 4, "N", 0, 2211, "regtypein", true},
		{2950, "uuid", 16, "U", 0, 2951, "uuid_in", false},
		{114, "json", -1, "U", 0, 199, "json_in", false},
		{3802, "jsonb", -1, "U", 0, 3807, "jsonb_in", false},
		// jsonpath is no column type here; the jsonb_path_ functions
		// take their paths as text.
		{4072, "jsonpath", -1, "U", 0, 4073, "jsonpath_in", false},
	}
	out := append([]Type(nil), base...)
	for _, b := range base {
		out = append(out, Type{b.Array, "_" + b.Name, -1, "A", b.OID, 0, "array_in", false})
	}
	return out
}()

// ProcOIDs are function OIDs of PostgreSQL 15 that catalog queries
// compare with (typinput = 'array_in'::regproc).
var ProcOIDs = map[string]int64{
	"boolin": 1242, "byteain": 1244, "charin": 1245, "namein": 34, "int8in": 460, "int2in": 38,
	"int2vectorin": 40, "int4in": 42, "regprocin": 44, "textin": 46, "oidin": 1798, "oidvectorin": 54,
	"float4in": 200, "float8in": 214, "varcharin": 1046, "date_in": 1084, "timestamp_in": 1312,
	"timestamptz_in": 1150, "interval_in": 1160, "time_in": 1143, "timetz_in": 1350, "numeric_in": 1701, "regclassin": 2218,
	"regtypein": 2220, "array_in": 750, "uuid_in": 2952, "json_in": 321, "jsonb_in": 3806, "jsonpath_in": 4001,
}

// TypeByOID finds a pg_type row.
func TypeByOID(oid int64) (Type, bool) {
	for _, t := range Types {
		if t.OID == oid {
			return t, true
		}
	}
	return Type{}, false
}

// TypeByName finds a pg_type row by typname or by the SQL name
// format_type prints ("integer", "character varying").
func TypeByName(name string) (Type, bool) {
	if t, err := types.Parse(name); err == nil {
		return TypeByOID(int64(t.OID()))
	}
	for _, t := range Types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// TypeColumns are pg_type's columns.
var TypeColumns = cols("oid", types.Int8, "typname", types.Text, "typnamespace", types.Int8, "typowner", types.Int8,
	"typlen", types.Int2, "typbyval", types.Bool, "typtype", types.Text, "typcategory", types.Text,
	"typispreferred", types.Bool, "typisdefined", types.Bool, "typdelim", types.Text,
	"typrelid", types.Int8, "typsubscript", types.Text, "typelem", types.Int8, "typarray", types.Int8,
	"typinput", types.Int8, "typoutput", types.Int8, "typreceive", types.Int8, "typsend", types.Int8,
	"typalign", types.Text, "typstorage", types.Text, "typnotnull", types.Bool,
	"typbasetype", types.Int8, "typtypmod", types.Int4, "typndims", types.Int4,
	"typcollation", types.Int8, "typdefault", types.Text, "typdefaultbin", types.Text, "typacl", types.Text)

// TypeRows are pg_type's rows: one per Types entry, with PostgreSQL's
// alignment, storage and collation for it.
func TypeRows() []types.Row {
	var rows []types.Row
	for _, t := range Types {
		align, storage := "i", "p"
		switch {
		case t.OID == int64(types.OIDUUID):
			align = "c" // 16 bytes, but byte-aligned
		case t.Len == 8 || t.Len == 12 || t.Len == 16 || t.Category == "A" && t.OID != 22 && t.OID != 30:
			align = "d"
		case t.Len == 1 || t.Len == 64:
			align = "c"
		case t.Len == 2:
			align = "s"
		}
		switch {
		case t.OID == 1700:
			storage = "m" // numeric
		case t.Len == -1:
			storage = "x"
		}
		collation := int64(0)
		if t.Category == "S" && t.OID != 19 {
			collation = 100
		}
		sub := "-"
		if t.Elem != 0 {
			sub = "array_subscript_handler"
		}
		rows = append(rows, types.Row{i(t.OID), s(t.Name), i(NamespacePgCatalog), i(10),
			i(t.Len), b(t.ByVal), s("b"), s(t.Category),
			b(t.OID == 25 || t.OID == 701 || t.OID == 1184 || t.OID == 1186 || t.OID == 26),
			b(true), s(","), i(0), s(sub), i(t.Elem), i(t.Array),
			i(ProcOIDs[t.Input]), i(0), i(0), i(0), s(align), s(storage),
			b(false), i(0), i(-1), i(0), i(collation), types.Null, types.Null, types.Null})
	}
	return rows
}

func init() {
	register("pg_catalog.pg_type", TypeColumns, func(Engine) []types.Row { return TypeRows() })
}
