package sql

import (
	"fmt"
	"strings"

	"streamdb/catalog"
	"streamdb/types"
)

// information_schema.schemata, table_constraints, key_column_usage and
// views, as Metabase, DBeaver and ORMs read them. The constraints are each
// relation's primary key (named <table>_pkey) and, as PostgreSQL 15 lists
// them, one CHECK row per NOT NULL column named
// <namespace oid>_<relation oid>_<column number>_not_null. views lists the
// materialized views (information_schema.tables calls them VIEW too) with
// their query as view_definition.

// notNullName is PostgreSQL's name for a NOT NULL column's CHECK row.
func (r pgRelation) notNullName(attnum int) string {
	return fmt.Sprintf("%d_%d_%d_not_null", oidPublic, r.oid, attnum)
}

func init() {
	pgSystemTables["information_schema.schemata"] = pgSystemTableDef{
		cols: cols("catalog_name", types.Text, "schema_name", types.Text, "schema_owner", types.Text,
			"default_character_set_catalog", types.Text, "default_character_set_schema", types.Text,
			"default_character_set_name", types.Text, "sql_path", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, s := range []string{"information_schema", "pg_catalog", "public"} {
				out = append(out, types.Row{str(infoSchemaCatalog), str(s), str(BootstrapUser),
					types.Null, types.Null, types.Null, types.Null})
			}
			return out
		},
	}
	pgSystemTables["information_schema.table_constraints"] = pgSystemTableDef{
		cols: cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
			"table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
			"constraint_type", types.Text, "is_deferrable", types.Text, "initially_deferred", types.Text,
			"enforced", types.Text, "nulls_distinct", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			row := func(r pgRelation, name, typ string, nullsDistinct types.Datum) types.Row {
				return types.Row{str(infoSchemaCatalog), str("public"), str(name), str(infoSchemaCatalog),
					str("public"), str(r.d.Name), str(typ), str("NO"), str("NO"), str("YES"), nullsDistinct}
			}
			for _, r := range e.pgRelations() {
				if r.d.Kind == catalog.KindView {
					continue
				}
				if len(r.d.PrimaryKey) > 0 {
					out = append(out, row(r, r.pkName(), "PRIMARY KEY", str("YES")))
				}
				out = append(out, infoSchemaConstraintRows(r)...)
				for i, c := range r.cols {
					if c.notNull {
						out = append(out, row(r, r.notNullName(i+1), "CHECK", types.Null))
					}
				}
			}
			return out
		},
	}
	pgSystemTables["information_schema.key_column_usage"] = pgSystemTableDef{
		cols: cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
			"table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
			"column_name", types.Text, "ordinal_position", types.Int4, "position_in_unique_constraint", types.Int4),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.pgRelations() {
				for i, k := range r.d.PrimaryKey {
					out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(r.pkName()),
						str(infoSchemaCatalog), str("public"), str(r.d.Name), str(k), intD(int64(i + 1)), types.Null})
				}
				out = append(out, e.infoSchemaKeyColumnRows(r)...)
			}
			return out
		},
	}
	pgSystemTables["information_schema.views"] = pgSystemTableDef{
		cols: cols("table_catalog", types.Text, "table_schema", types.Text, "table_name", types.Text,
			"view_definition", types.Text, "check_option", types.Text, "is_updatable", types.Text,
			"is_insertable_into", types.Text, "is_trigger_updatable", types.Text,
			"is_trigger_deletable", types.Text, "is_trigger_insertable_into", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.pgRelations() {
				if r.d.Kind != catalog.KindView && r.d.Kind != catalog.KindPlainView {
					continue
				}
				def := " " + strings.TrimRight(strings.TrimSpace(r.d.Query), ";") + ";"
				out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(r.d.Name), str(def),
					str("NONE"), str("NO"), str("NO"), str("NO"), str("NO"), str("NO")})
			}
			return out
		},
	}
}
