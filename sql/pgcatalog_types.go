package sql

import (
	"streamdb/pgcatalog"
	"streamdb/types"
)

// pg_type's rows are pgcatalog.Types.

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
			for _, t := range pgcatalog.Types {
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
				rows = append(rows, types.Row{intD(t.OID), str(t.Name), intD(oidPgCatalog), intD(10),
					intD(t.Len), types.NewBool(t.ByVal), str("b"), str(t.Category),
					types.NewBool(t.OID == 25 || t.OID == 701 || t.OID == 1184 || t.OID == 1186 || t.OID == 26),
					types.NewBool(true), str(","), intD(0), str(sub), intD(t.Elem), intD(t.Array),
					intD(pgcatalog.ProcOIDs[t.Input]), intD(0), intD(0), intD(0), str(align), str(storage),
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
