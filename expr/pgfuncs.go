package expr

import (
	"streamdb/types"
)

// pgCatalogFunc builds the pg_catalog functions that need no server state,
// for queries on the pg_catalog system tables: format_type(type_oid,
// typmod) and pg_table_is_visible(oid). ok is false for other names.
func pgCatalogFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	if e, ok, err := arrayFunc(name, args); ok {
		return e, true, err
	}
	if e, ok, err := toolFunc(name, args); ok {
		return e, true, err
	}
	for _, f := range []func(string, []Expr) (Expr, bool, error){moreStringFunc, regexpFunc, moreMathFunc, numericScaleFunc, moreTimeFunc, zoneFunc, oidInputFunc} {
		if e, ok, err := f(name, args); ok {
			return e, true, err
		}
	}
	switch name {
	case "regexp_like":
		e, err := regexpLike(name, args)
		return e, true, err
	case "to_char":
		e, err := toChar(name, args)
		return e, true, err
	case "format_type":
		if len(args) != 2 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Int8, types.Int8)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: types.Text, Fn: formatType}, true, nil
	case "pg_table_is_visible":
		// User relations are in schema public and the system tables in
		// pg_catalog, both on the search path; information_schema is not.
		if len(args) != 1 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Int8)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: types.Bool, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			return types.NewBool(v[0].I < InfoSchemaRelOIDs || v[0].I >= InfoSchemaRelOIDs+1000), nil
		})}, true, nil
	}
	return nil, false, nil
}

// InfoSchemaRelOIDs is the first of the 1000 OIDs of the
// information_schema relations in pg_class.
const InfoSchemaRelOIDs = 13000

// catalogTypeNames are format_type's names of the system catalogs' own
// types, which system columns and catalog columns have.
var catalogTypeNames = map[int64]string{
	18: `"char"`, 19: "name", 22: "int2vector", 24: "regproc", 26: "oid", 27: "tid", 28: "xid",
	29: "cid", 30: "oidvector", 194: "pg_node_tree", 705: "unknown", 1033: "aclitem", 2205: "regclass",
	4072: "jsonpath", 4073: "jsonpath[]",
}

// formatType is PostgreSQL's format_type: the SQL name of a type OID with
// the size a typmod encodes ("character varying(20)", "numeric(10,2)"); a
// NULL typmod means none, an unknown OID gives "???".
func formatType(v []types.Datum) (types.Datum, error) {
	if v[0].IsNull() {
		return types.Null, nil
	}
	t, ok := types.FromOID(uint32(v[0].I))
	if name, sys := catalogTypeNames[v[0].I]; sys {
		return types.NewString(name), nil
	}
	if !ok || t == types.Unknown {
		return types.NewString("???"), nil
	}
	var mod types.Modifier
	if (t.IsTimeOfDay() || t.IsTime()) && !v[1].IsNull() && v[1].I >= 0 {
		mod.TimePrecision, mod.HasTimePrecision = int(min(v[1].I, types.MaxTimePrecision)), true
	}
	if !v[1].IsNull() && v[1].I >= 4 {
		switch t {
		case types.Varchar:
			mod.Length = int(v[1].I - 4)
		case types.Numeric:
			mod = types.NumericModifierOf(v[1].I)
		}
	}
	return types.NewString(types.TypeName(t, mod)), nil
}
