package pgcatalog

import "streamdb/types"

// NamespacePgCatalog is the OID of schema pg_catalog.
const NamespacePgCatalog = 11

// A Table is a catalog whose rows are PostgreSQL 15's own, the same in
// every streamdb database.
type Table struct {
	Columns []types.Column
	Rows    []types.Row
}

// FixedTables are the catalogs of pg_catalog whose rows do not depend on
// the database, by name.
var FixedTables = map[string]Table{
	// pg_collation: the collations every PostgreSQL database has
	// (Django's table description joins it); streamdb compares text
	// bytewise, as collation C does.
	"pg_collation": {
		Columns: cols("oid", types.Int8, "collname", types.Text, "collnamespace", types.Int8, "collowner", types.Int8,
			"collprovider", types.Text, "collisdeterministic", types.Bool, "collencoding", types.Int4,
			"collcollate", types.Text, "collctype", types.Text, "colliculocale", types.Text, "collversion", types.Text),
		Rows: []types.Row{
			{i(100), s("default"), i(NamespacePgCatalog), i(10), s("d"), types.NewBool(true), i(-1), types.Null, types.Null, types.Null, types.Null},
			{i(950), s("C"), i(NamespacePgCatalog), i(10), s("c"), types.NewBool(true), i(-1), s("C"), s("C"), types.Null, types.Null},
			{i(951), s("POSIX"), i(NamespacePgCatalog), i(10), s("c"), types.NewBool(true), i(-1), s("POSIX"), s("POSIX"), types.Null, types.Null},
		},
	},
	// pg_range: PostgreSQL 15's built-in range types. streamdb has no
	// range types; drivers read this table to learn the range types'
	// OIDs, and find none of them in pg_type.
	"pg_range": {
		Columns: cols("rngtypid", types.Int8, "rngsubtype", types.Int8, "rngmultitypid", types.Int8,
			"rngcollation", types.Int8, "rngsubopc", types.Int8, "rngcanonical", types.Text, "rngsubdiff", types.Text),
		Rows: []types.Row{
			{i(3904), i(23), i(4451), i(0), i(1978), s("int4range_canonical"), s("int4range_subdiff")},
			{i(3906), i(1700), i(4532), i(0), i(3125), s("-"), s("numrange_subdiff")},
			{i(3908), i(1114), i(4533), i(0), i(3128), s("-"), s("tsrange_subdiff")},
			{i(3910), i(1184), i(4534), i(0), i(3127), s("-"), s("tstzrange_subdiff")},
			{i(3912), i(1082), i(4535), i(0), i(3122), s("daterange_canonical"), s("daterange_subdiff")},
			{i(3926), i(20), i(4536), i(0), i(3124), s("int8range_canonical"), s("int8range_subdiff")},
		},
	},
	// pg_tablespace: PostgreSQL's two tablespaces; streamdb has no others.
	"pg_tablespace": {
		Columns: cols("oid", types.Int8, "spcname", types.Text, "spcowner", types.Int8, "spcacl", types.Text, "spcoptions", textArray),
		Rows: []types.Row{
			{i(1663), s("pg_default"), i(10), types.Null, types.Null},
			{i(1664), s("pg_global"), i(10), types.Null, types.Null},
		},
	},
}

func i(v int64) types.Datum  { return types.NewInt(v) }
func s(v string) types.Datum { return types.NewString(v) }

func init() {
	for name, t := range FixedTables {
		register("pg_catalog."+name, t.Columns, func(Engine) []types.Row {
			rows := make([]types.Row, len(t.Rows))
			for i, r := range t.Rows {
				rows[i] = append(types.Row(nil), r...)
			}
			return rows
		})
	}
}
