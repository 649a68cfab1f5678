package sql

import (
	"strings"

	"streamdb/catalog"
	"streamdb/pgcatalog"
	"streamdb/types"
)

// pg_tables, pg_views and pg_matviews, the pg_catalog views that tools
// (Metabase's privilege check, DBeaver, pgAdmin) list relations from:
// tables and streams are pg_tables rows (relkind r), views pg_views rows
// (relkind v), materialized views pg_matviews rows (relkind m). The
// owner is the object's owner, as in pg_class.
func init() {
	b := types.NewBool
	pgSystemTables["pg_catalog.pg_tables"] = pgSystemTableDef{
		cols: cols("schemaname", types.Text, "tablename", types.Text, "tableowner", types.Text,
			"tablespace", types.Text, "hasindexes", types.Bool, "hasrules", types.Bool,
			"hastriggers", types.Bool, "rowsecurity", types.Bool),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.pgRelations() {
				if r.relkind == "r" {
					out = append(out, types.Row{str("public"), str(r.d.Name), str(e.roles.Owner(r.d)), types.Null,
						b(len(r.d.PrimaryKey) > 0), b(false), b(false), b(false)})
				}
			}
			return out
		},
	}
	pgSystemTables["pg_catalog.pg_views"] = pgSystemTableDef{
		cols: cols("schemaname", types.Text, "viewname", types.Text, "viewowner", types.Text, "definition", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.pgRelations() {
				if r.relkind == "v" {
					def := " " + strings.TrimRight(strings.TrimSpace(r.d.Query), ";") + ";"
					out = append(out, types.Row{str("public"), str(r.d.Name), str(e.roles.Owner(r.d)), str(def)})
				}
			}
			return out
		},
	}
	pgSystemTables["pg_catalog.pg_matviews"] = pgSystemTableDef{
		cols: cols("schemaname", types.Text, "matviewname", types.Text, "matviewowner", types.Text,
			"tablespace", types.Text, "hasindexes", types.Bool, "ispopulated", types.Bool, "definition", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.pgRelations() {
				if r.relkind == "m" {
					def := " " + strings.TrimRight(strings.TrimSpace(r.d.Query), ";") + ";"
					out = append(out, types.Row{str("public"), str(r.d.Name), str(e.roles.Owner(r.d)), types.Null,
						b(len(r.d.PrimaryKey) > 0 || len(r.d.Indexes) > 0), b(r.d.Kind != catalog.KindUnpopulatedView), str(def)})
				}
			}
			return out
		},
	}
}

// pg_depend holds the dependencies tools look up through it
// (pgcatalog.DependRows; DBeaver joins it to find a column's sequence).
func init() {
	pgSystemTables["pg_catalog.pg_depend"] = pgSystemTableDef{
		cols: pgcatalog.DependColumns,
		rows: func(e *Engine) []types.Row { return pgcatalog.DependRows(catalogEngine{e}) },
	}
}
