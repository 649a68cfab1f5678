package sql

import (
	"streamdb/catalog"
	"streamdb/types"
)

// information_schema.tables and information_schema.columns, for drivers and
// GUI tools. Views and materialized views are listed with table_type
// 'VIEW' (PostgreSQL leaves materialized views out of information_schema,
// but in streamdb they are the objects people query); streams and tables
// are 'BASE TABLE'.
// table_catalog is "streamdb": the server has one database under any name.

const infoSchemaCatalog = "streamdb"

func yesNo(b bool) types.Datum {
	if b {
		return str("YES")
	}
	return str("NO")
}

// nullInt is an integer, or NULL when ok is false.
func nullInt(i int64, ok bool) types.Datum {
	if !ok {
		return types.Null
	}
	return intD(i)
}

var infoSchemaTables = pgSystemTableDef{
	cols: cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"table_type", types.Text, "is_insertable_into", types.Text),
	rows: func(e *Engine) []types.Row {
		var rows []types.Row
		for _, r := range e.pgRelations() {
			typ := "BASE TABLE"
			view := r.d.Kind == catalog.KindView || r.d.Kind == catalog.KindPlainView
			if view {
				typ = "VIEW"
			}
			rows = append(rows, types.Row{str(infoSchemaCatalog), str("public"), str(r.d.Name), str(typ),
				yesNo(!view)})
		}
		return rows
	},
}

var infoSchemaColumns = pgSystemTableDef{
	cols: cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"column_name", types.Text, "ordinal_position", types.Int4, "column_default", types.Text,
		"is_nullable", types.Text, "data_type", types.Text, "character_maximum_length", types.Int4,
		"numeric_precision", types.Int4, "numeric_scale", types.Int4, "datetime_precision", types.Int4,
		"udt_schema", types.Text, "udt_name", types.Text, "is_identity", types.Text, "identity_generation", types.Text,
		"is_generated", types.Text, "generation_expression", types.Text),
	// As in PostgreSQL, only the columns of relations the reader owns
	// or holds SELECT, INSERT or UPDATE on.
	rowsFor: func(e *Engine, reader rowReader) []types.Row {
		var rows []types.Row
		for _, r := range e.pgRelations() {
			if !reader.holdsAny(r.d, "SELECT", "INSERT", "UPDATE") {
				continue
			}
			for i, c := range r.cols {
				prec, scale, hasPrec := numericPrecision(c)
				dtPrec, hasDT := datetimePrecision(c.typ)
				if c.mod.HasTimePrecision {
					dtPrec = int64(c.mod.TimePrecision)
				}
				rows = append(rows, types.Row{str(infoSchemaCatalog), str("public"), str(r.d.Name),
					str(c.name), intD(int64(i + 1)), columnDefault(c), yesNo(!c.notNull), str(infoSchemaDataType(c.typ)),
					nullInt(int64(c.mod.Length), c.mod.Length > 0), nullInt(prec, hasPrec),
					nullInt(scale, hasPrec && (c.typ == types.Numeric || scale == 0)),
					nullInt(dtPrec, hasDT), str("pg_catalog"), str(typname(c.typ)), yesNo(c.identity != ""),
					identityGeneration(c.identity), str(isGenerated(c)), nullText(c.generated)})
			}
		}
		return rows
	},
}

// infoSchemaDataType is information_schema's data_type: ARRAY for the
// array types, whose element type udt_name names (_int4).
func infoSchemaDataType(t types.Type) string {
	if t.IsArray() {
		return "ARRAY"
	}
	return t.String()
}

// numericPrecision is information_schema's numeric_precision and
// numeric_scale of a column (binary digits for integers and floats).
func numericPrecision(c pgColumn) (prec, scale int64, ok bool) {
	switch c.typ {
	case types.Int2:
		return 16, 0, true
	case types.Int4:
		return 32, 0, true
	case types.Int8:
		return 64, 0, true
	case types.Float4:
		return 24, -1, true
	case types.Float8:
		return 53, -1, true
	case types.Numeric:
		if c.mod.Precision > 0 {
			return int64(c.mod.Precision), int64(c.mod.Scale), true
		}
	}
	return 0, 0, false
}

// datetimePrecision is information_schema's datetime_precision.
func datetimePrecision(t types.Type) (int64, bool) {
	switch t {
	case types.Date:
		return 0, true
	case types.Timestamp, types.Timestamptz, types.Interval, types.Time, types.TimeTZ:
		return 6, true
	}
	return 0, false
}

// isGenerated is information_schema.columns.is_generated.
func isGenerated(c pgColumn) string {
	if c.generated != "" {
		return "ALWAYS"
	}
	return "NEVER"
}

// nullText is s, NULL for "".
func nullText(s string) types.Datum {
	if s == "" {
		return types.Null
	}
	return str(s)
}
