package sql

import (
	"streamdb/types"
)

// pg_type: the base types streamdb has, their array types, and the few
// other types the catalogs' own columns use (oid, name, char, regclass,
// regproc, regtype, int2vector, oidvector). OIDs, names, lengths and
// categories are PostgreSQL 15's, so that drivers that cache pg_type by OID
// (pgjdbc, psycopg, SQLAlchemy) agree with what they know built in.

// pgTypeInfo is one row of pg_type.
type pgTypeInfo struct {
	oid      int64
	name     string
	len      int64
	category string // typcategory
	elem     int64  // typelem: the element type of an array
	array    int64  // typarray: the array type of this type
	input    string // typinput's function name
	byval    bool
}

// pgTypeTable lists every type pg_type shows, base types first.
var pgTypeTable = func() []pgTypeInfo {
	base := []pgTypeInfo{
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
	out := append([]pgTypeInfo(nil), base...)
	for _, b := range base {
		out = append(out, pgTypeInfo{b.array, "_" + b.name, -1, "A", b.oid, 0, "array_in", false})
	}
	return out
}()

// Function OIDs of PostgreSQL 15 that catalog queries compare with
// (typinput = 'array_in'::regproc).
var pgProcOIDs = map[string]int64{
	"boolin": 1242, "byteain": 1244, "charin": 1245, "namein": 34, "int8in": 460, "int2in": 38,
	"int2vectorin": 40, "int4in": 42, "regprocin": 44, "textin": 46, "oidin": 1798, "oidvectorin": 54,
	"float4in": 200, "float8in": 214, "varcharin": 1046, "date_in": 1084, "timestamp_in": 1312,
	"timestamptz_in": 1150, "interval_in": 1160, "time_in": 1143, "timetz_in": 1350, "numeric_in": 1701, "regclassin": 2218,
	"regtypein": 2220, "array_in": 750, "uuid_in": 2952, "json_in": 321, "jsonb_in": 3806, "jsonpath_in": 4001,
}

// pgTypeByOID finds a pg_type row.
func pgTypeByOID(oid int64) (pgTypeInfo, bool) {
	for _, t := range pgTypeTable {
		if t.oid == oid {
			return t, true
		}
	}
	return pgTypeInfo{}, false
}

// pgTypeByName finds a pg_type row by typname or by the SQL name
// format_type prints ("integer", "character varying").
func pgTypeByName(name string) (pgTypeInfo, bool) {
	if t, err := types.Parse(name); err == nil {
		return pgTypeByOID(int64(t.OID()))
	}
	for _, t := range pgTypeTable {
		if t.name == name {
			return t, true
		}
	}
	return pgTypeInfo{}, false
}

func init() {
	pgSystemTables["pg_catalog.pg_type"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "typname", types.Text, "typnamespace", types.Int8, "typowner", types.Int8,
			"typlen", types.Int2, "typbyval", types.Bool, "typtype", types.Text, "typcategory", types.Text,
			"typispreferred", types.Bool, "typisdefined", types.Bool, "typdelim", types.Text,
			"typrelid", types.Int8, "typsubscript", types.Text, "typelem", types.Int8, "typarray", types.Int8,
			"typinput", types.Int8, "typoutput", types.Int8, "typreceive", types.Int8, "typsend", types.Int8,
			"typalign", types.Text, "typstorage", types.Text, "typnotnull", types.Bool,
			"typbasetype", types.Int8, "typtypmod", types.Int4, "typndims", types.Int4,
			"typcollation", types.Int8, "typdefault", types.Text, "typdefaultbin", types.Text, "typacl", types.Text),
		rows: func(*Engine) []types.Row {
			var rows []types.Row
			for _, t := range pgTypeTable {
				align, storage := "i", "p"
				switch {
				case t.oid == int64(types.OIDUUID):
					align = "c" // 16 bytes, but byte-aligned
				case t.len == 8 || t.len == 12 || t.len == 16 || t.category == "A" && t.oid != 22 && t.oid != 30:
					align = "d"
				case t.len == 1 || t.len == 64:
					align = "c"
				case t.len == 2:
					align = "s"
				}
				switch {
				case t.oid == 1700:
					storage = "m" // numeric
				case t.len == -1:
					storage = "x"
				}
				collation := int64(0)
				if t.category == "S" && t.oid != 19 {
					collation = 100
				}
				sub := "-"
				if t.elem != 0 {
					sub = "array_subscript_handler"
				}
				rows = append(rows, types.Row{intD(t.oid), str(t.name), intD(oidPgCatalog), intD(10),
					intD(t.len), types.NewBool(t.byval), str("b"), str(t.category),
					types.NewBool(t.oid == 25 || t.oid == 701 || t.oid == 1184 || t.oid == 1186 || t.oid == 26),
					types.NewBool(true), str(","), intD(0), str(sub), intD(t.elem), intD(t.array),
					intD(pgProcOIDs[t.input]), intD(0), intD(0), intD(0), str(align), str(storage),
					types.NewBool(false), intD(0), intD(-1), intD(0), intD(collation), types.Null, types.Null, types.Null})
			}
			return rows
		},
	}
}

// streamdb has no enum types: pg_enum is empty (SQLAlchemy reads it when
// it reflects columns).
func init() {
	pgSystemTables["pg_catalog.pg_enum"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "enumtypid", types.Int8, "enumsortorder", types.Float4, "enumlabel", types.Text),
		rows: func(*Engine) []types.Row { return nil },
	}
}
