package sql

import (
	"context"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// addPrimaryKey applies ALTER TABLE ... ADD [CONSTRAINT t_pkey] PRIMARY
// KEY (columns) to a table without one, which pg_dump writes after a
// table's rows: the rows must be NOT NULL and unique in the key (23502,
// 23505, as PostgreSQL), and the table's state is rewritten under the
// key (rewriteTableRows). A table's primary key index is named
// <table>_pkey in streamdb, so another name is refused; so is a table a
// materialized view reads, whose dataflow was planned without the key.
func (a *columnChange) addPrimaryKey(ctx context.Context, act front.AlterAction) error {
	d := a.New
	if !a.isTable() {
		return a.onlyTables("ADD PRIMARY KEY")
	}
	if len(d.PrimaryKey) > 0 {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", d.Name)
	}
	if n := act.Def.Name; n != "" && n != catalog.PrimaryKeyName(d.Name) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "a primary key of table \"%s\" must be named %s", d.Name, catalog.PrimaryKeyName(d.Name)).
			WithHint("Write ADD CONSTRAINT %s PRIMARY KEY (...) or ADD PRIMARY KEY (...).", catalog.PrimaryKeyName(d.Name))
	}
	if d.Constraint(catalog.PrimaryKeyName(d.Name)) != nil {
		return sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", catalog.PrimaryKeyName(d.Name))
	}
	var idx []int
	for _, k := range act.Keys {
		i := a.column(k)
		if i < 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", k, d.Name)
		}
		if slices.Contains(idx, i) {
			return sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" appears twice in primary key constraint", k)
		}
		if d.Columns[i].Generated != "" {
			return sqlerr.New(sqlerr.FeatureNotSupported, "a generated column cannot be part of a primary key")
		}
		idx = append(idx, i)
	}
	for _, v := range a.s.e.objects(catalog.KindView) {
		if slices.Contains(v.DependsOn, d.Name) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "cannot add a primary key to table \"%s\": materialized view %s reads it", d.Name, v.Name).
				WithHint("Add the primary key before creating the materialized view, or drop the view and create it again.")
		}
	}
	rows, err := a.rowsToCheck(ctx)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		key := make(types.Row, len(idx))
		for j, i := range idx {
			if key[j] = r[a.From[i]]; key[j].IsNull() {
				return sqlerr.New(sqlerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", d.Columns[i].Name, d.Name)
			}
		}
		k := string(rowKey(nil, key))
		if seen[k] {
			vals := make([]string, len(key))
			for j := range key {
				t, _, _ := types.ParseWithModifier(d.Columns[idx[j]].Type)
				vals[j] = types.FormatText(key[j], t)
			}
			return withDetail(sqlerr.New(sqlerr.UniqueViolation, "could not create unique index \"%s\"", catalog.PrimaryKeyName(d.Name)),
				"Key (%s)=(%s) is duplicated.", strings.Join(act.Keys, ", "), strings.Join(vals, ", "))
		}
		seen[k] = true
	}
	d.PrimaryKey = slices.Clone(act.Keys)
	a.Rewrite, a.changed = true, true
	return nil
}
