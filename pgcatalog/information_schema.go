package pgcatalog

import (
	"fmt"

	"streamdb/types"
)

// information_schema.tables and information_schema.columns, for drivers and
// GUI tools. Views and materialized views are listed with table_type
// 'VIEW' (PostgreSQL leaves materialized views out of information_schema,
// but in streamdb they are the objects people query); streams and tables
// are 'BASE TABLE'.
// table_catalog is "streamdb": the server has one database under any name.

const infoSchemaCatalog = DatabaseName

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

func init() {
	register("information_schema.tables", cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"table_type", types.Text, "is_insertable_into", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.Relations() {
				typ := "BASE TABLE"
				view := r.Kind == "m" || r.Kind == "v"
				if view {
					typ = "VIEW"
				}
				rows = append(rows, types.Row{str(infoSchemaCatalog), str("public"), str(r.Name), str(typ),
					yesNo(!view)})
			}
			return rows
		})
	tables["information_schema.columns"] = SystemTable{Columns: cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"column_name", types.Text, "ordinal_position", types.Int4, "column_default", types.Text,
		"is_nullable", types.Text, "data_type", types.Text, "character_maximum_length", types.Int4,
		"numeric_precision", types.Int4, "numeric_scale", types.Int4, "datetime_precision", types.Int4,
		"udt_schema", types.Text, "udt_name", types.Text, "is_identity", types.Text, "identity_generation", types.Text,
		"is_generated", types.Text, "generation_expression", types.Text),
		// As in PostgreSQL, only the columns of relations the reader owns
		// or holds SELECT, INSERT or UPDATE on.
		Rows: func(e Engine, reader Reader) []types.Row {
			var rows []types.Row
			for _, r := range e.Relations() {
				if !reader.HoldsAny(r.Name, "SELECT", "INSERT", "UPDATE") {
					continue
				}
				for i, c := range r.Columns {
					prec, scale, hasPrec := numericPrecision(c)
					dtPrec, hasDT := datetimePrecision(c.Type)
					if c.Mod.HasTimePrecision {
						dtPrec = int64(c.Mod.TimePrecision)
					}
					rows = append(rows, types.Row{str(infoSchemaCatalog), str("public"), str(r.Name),
						str(c.Name), intD(int64(i + 1)), columnDefault(c), yesNo(!c.NotNull), str(infoSchemaDataType(c.Type)),
						nullInt(int64(c.Mod.Length), c.Mod.Length > 0), nullInt(prec, hasPrec),
						nullInt(scale, hasPrec && (c.Type == types.Numeric || scale == 0)),
						nullInt(dtPrec, hasDT), str("pg_catalog"), str(Typname(c.Type)), yesNo(c.Identity != ""),
						identityGeneration(c.Identity), str(isGenerated(c)), nullText(c.Generated)})
				}
			}
			return rows
		}}
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
func numericPrecision(c Column) (prec, scale int64, ok bool) {
	switch c.Type {
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
		if c.Mod.Precision > 0 {
			// PostgreSQL 15 reads the scale as the typmod's low 16 bits,
			// where it is stored in 11: a negative scale shows as
			// 2048 + scale (numeric(3,-2): 2046). Clients compare
			// with PostgreSQL's answer, so it is kept.
			return int64(c.Mod.Precision), int64(c.Mod.Scale & 0x7ff), true
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
func isGenerated(c Column) string {
	if c.Generated != "" {
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

// information_schema.schemata, table_constraints, key_column_usage and
// views, as Metabase, DBeaver and ORMs read them. The constraints are each
// relation's primary key (named <table>_pkey) and, as PostgreSQL 15 lists
// them, one CHECK row per NOT NULL column named
// <namespace oid>_<relation oid>_<column number>_not_null. views lists the
// materialized views (information_schema.tables calls them VIEW too) with
// their query as view_definition.

// notNullName is PostgreSQL's name for a NOT NULL column's CHECK row.
func (r Relation) notNullName(attnum int) string {
	return fmt.Sprintf("%d_%d_%d_not_null", NamespacePublic, r.OID, attnum)
}

func init() {
	register("information_schema.schemata", cols("catalog_name", types.Text, "schema_name", types.Text, "schema_owner", types.Text,
		"default_character_set_catalog", types.Text, "default_character_set_schema", types.Text,
		"default_character_set_name", types.Text, "sql_path", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, s := range []string{"information_schema", "pg_catalog", "public"} {
				out = append(out, types.Row{str(infoSchemaCatalog), str(s), str(BootstrapUser),
					types.Null, types.Null, types.Null, types.Null})
			}
			return out
		})
	register("information_schema.table_constraints", cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
		"table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"constraint_type", types.Text, "is_deferrable", types.Text, "initially_deferred", types.Text,
		"enforced", types.Text, "nulls_distinct", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			row := func(r Relation, name, typ string, nullsDistinct types.Datum) types.Row {
				return types.Row{str(infoSchemaCatalog), str("public"), str(name), str(infoSchemaCatalog),
					str("public"), str(r.Name), str(typ), str("NO"), str("NO"), str("YES"), nullsDistinct}
			}
			for _, r := range e.Relations() {
				if r.Kind == "m" {
					continue
				}
				if len(r.PrimaryKey) > 0 {
					out = append(out, row(r, r.PKName(), "PRIMARY KEY", str("YES")))
				}
				out = append(out, infoSchemaConstraintRows(r)...)
				for i, c := range r.Columns {
					if c.NotNull {
						out = append(out, row(r, r.notNullName(i+1), "CHECK", types.Null))
					}
				}
			}
			return out
		})
	register("information_schema.key_column_usage", cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
		"table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"column_name", types.Text, "ordinal_position", types.Int4, "position_in_unique_constraint", types.Int4),
		func(e Engine) []types.Row {
			var out []types.Row
			rels := e.Relations()
			for _, r := range rels {
				for i, k := range r.PrimaryKey {
					out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(r.PKName()),
						str(infoSchemaCatalog), str("public"), str(r.Name), str(k), intD(int64(i + 1)), types.Null})
				}
				out = append(out, infoSchemaKeyColumnRows(rels, r)...)
			}
			return out
		})
	register("information_schema.views", cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"view_definition", types.Text, "check_option", types.Text, "is_updatable", types.Text,
		"is_insertable_into", types.Text, "is_trigger_updatable", types.Text,
		"is_trigger_deletable", types.Text, "is_trigger_insertable_into", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, r := range e.Relations() {
				if r.Kind != "m" && r.Kind != "v" {
					continue
				}
				def := r.ViewDef()
				out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(r.Name), str(def),
					str("NONE"), str("NO"), str("NO"), str("NO"), str("NO"), str("NO")})
			}
			return out
		})
}

func init() {
	// information_schema.constraint_column_usage: Sequelize reads a
	// table's foreign keys' targets from it (sync, dropping tables).
	register("information_schema.constraint_column_usage", cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
		"column_name", types.Text, "constraint_catalog", types.Text, "constraint_schema", types.Text,
		"constraint_name", types.Text),
		constraintColumnUsage)
}

// constraintColumnUsage are information_schema.constraint_column_usage's
// rows: the columns each constraint uses (the primary key's, a UNIQUE's
// or CHECK's columns), a foreign key's being the columns it references.
func constraintColumnUsage(e Engine) []types.Row {
	var out []types.Row
	row := func(table, col, con string) types.Row {
		return types.Row{str(infoSchemaCatalog), str("public"), str(table), str(col),
			str(infoSchemaCatalog), str("public"), str(con)}
	}
	for _, r := range e.Relations() {
		if r.Kind != "r" {
			continue
		}
		for _, k := range r.PrimaryKey {
			out = append(out, row(r.Name, k, r.PKName()))
		}
		for _, c := range r.Constraints {
			table, cols := r.Name, c.Columns
			if c.Type == "f" {
				table, cols = c.RefTable, c.RefColumns
			}
			for _, col := range cols {
				out = append(out, row(table, col, c.Name))
			}
		}
	}
	return out
}

// columnDefault is a column's default as the catalogs show it, NULL for
// none.
func columnDefault(c Column) types.Datum {
	if c.Default == "" {
		return types.Null
	}
	return str(c.Default)
}

// AttrDefDatum is what pg_get_expr answers for the column's pg_attrdef
// row, NULL for none.
func AttrDefDatum(c Column) types.Datum {
	if c.AttrDef() == "" {
		return types.Null
	}
	return str(c.AttrDef())
}

// identityGeneration is information_schema.columns.identity_generation
// of pg_attribute.attidentity.
func identityGeneration(identity string) types.Datum {
	switch identity {
	case "a":
		return str("ALWAYS")
	case "d":
		return str("BY DEFAULT")
	}
	return types.Null
}
