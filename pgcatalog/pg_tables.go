package pgcatalog

import (
	"streamdb/types"
)

// pg_tables, pg_views and pg_matviews, the pg_catalog views that tools
// (Metabase's privilege check, DBeaver, pgAdmin) list relations from:
// tables and streams are pg_tables rows (relkind r), views pg_views rows
// (relkind v), materialized views pg_matviews rows (relkind m). The
// owner is the relation's owner, as in pg_class.
func init() {
	register("pg_catalog.pg_tables", cols("schemaname", types.Text, "tablename", types.Text, "tableowner", types.Text,
		"tablespace", types.Text, "hasindexes", types.Bool, "hasrules", types.Bool,
		"hastriggers", types.Bool, "rowsecurity", types.Bool),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, r := range e.Relations() {
				if r.Kind == "r" {
					out = append(out, types.Row{str("public"), str(r.Name), str(r.Owner), types.Null,
						b(len(r.PrimaryKey) > 0), b(false), b(false), b(false)})
				}
			}
			return out
		})
	register("pg_catalog.pg_views", cols("schemaname", types.Text, "viewname", types.Text, "viewowner", types.Text, "definition", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, r := range e.Relations() {
				if r.Kind == "v" {
					def := r.ViewDef()
					out = append(out, types.Row{str("public"), str(r.Name), str(r.Owner), str(def)})
				}
			}
			return out
		})
	register("pg_catalog.pg_matviews", cols("schemaname", types.Text, "matviewname", types.Text, "matviewowner", types.Text,
		"tablespace", types.Text, "hasindexes", types.Bool, "ispopulated", types.Bool, "definition", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, r := range e.Relations() {
				if r.Kind == "m" {
					def := r.ViewDef()
					out = append(out, types.Row{str("public"), str(r.Name), str(r.Owner), types.Null,
						b(len(r.PrimaryKey) > 0 || len(r.Indexes) > 0), b(!r.Unpopulated), str(def)})
				}
			}
			return out
		})
	// pg_statio_all_tables: one row per table and materialized view with
	// its I/O counters, which streamdb does not keep (zero).
	register("pg_catalog.pg_statio_all_tables", cols("relid", types.Int8, "schemaname", types.Text, "relname", types.Text,
		"heap_blks_read", types.Int8, "heap_blks_hit", types.Int8, "idx_blks_read", types.Int8, "idx_blks_hit", types.Int8,
		"toast_blks_read", types.Int8, "toast_blks_hit", types.Int8, "tidx_blks_read", types.Int8, "tidx_blks_hit", types.Int8),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.Relations() {
				if r.Kind != "r" && r.Kind != "m" {
					continue
				}
				rows = append(rows, types.Row{intD(r.OID), str("public"), str(r.Name),
					intD(0), intD(0), intD(0), intD(0), types.Null, types.Null, types.Null, types.Null})
			}
			return rows
		})
}
