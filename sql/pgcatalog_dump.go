package sql

import (
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The catalogs pg_dump reads besides the relation catalogs. Most hold
// objects streamdb does not have (pgcatalog.EmptyCatalogs); pg_sequence
// has one row per sequence.

// textArrayType is text[].
var textArrayType = types.ArrayOf(types.Text)

func init() {
	for name, c := range pgcatalog.EmptyCatalogs {
		pgSystemTables["pg_catalog."+name] = pgSystemTableDef{cols: c, rows: func(*Engine) []types.Row { return nil }}
	}
	pgSystemTables["pg_catalog.pg_rewrite"] = pgSystemTableDef{
		cols: pgcatalog.RewriteColumns,
		rows: func(e *Engine) []types.Row { return pgcatalog.RewriteRows(catalogEngine{e}) },
	}
	pgSystemTables["pg_catalog.pg_sequence"] = pgSystemTableDef{
		cols: pgcatalog.SequenceColumns,
		rows: func(e *Engine) []types.Row { return pgcatalog.SequenceRows(catalogEngine{e}) },
	}
	for name, oid := range map[string]int64{
		"pg_tablespace": 1213, "pg_sequence": 2224, "pg_cast": 2605, "pg_depend": 2608, "pg_inherits": 2611,
		"pg_language": 2612, "pg_opclass": 2616, "pg_operator": 2617, "pg_rewrite": 2618, "pg_trigger": 2620,
		"pg_opfamily": 2753, "pg_policy": 3256, "pg_init_privs": 3394, "pg_collation": 3456, "pg_event_trigger": 3466,
		"pg_default_acl": 826, "pg_foreign_data_wrapper": 2328, "pg_foreign_server": 1417, "pg_publication": 6104,
		"pg_subscription": 6100, "pg_largeobject_metadata": 2995, "pg_transform": 3576, "pg_conversion": 2607,
	} {
		pgSystemRelOIDs[name] = oid
	}
}

// defaultSequence finds the sequence a DEFAULT nextval('name') names.
var defaultSequence = regexp.MustCompile(`nextval\('(?:public\.)?"?([^'"]+)"?'`)

// bindOptionsToTable binds pg_options_to_table(options) in FROM: the
// rows (option_name, option_value) of a text[] of "name=value" items,
// none for NULL. pg_dump reads the options of foreign-data wrappers,
// servers and columns through it; streamdb has none of those options,
// but the function works on any array.
func bindOptionsToTable(b *binder, fc *ast.FuncCallExpr) ([]srfCall, error) {
	if fc.FnName.L != "pg_options_to_table" {
		return nil, nil
	}
	if len(fc.Args) != 1 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_options_to_table takes one text[] argument")
	}
	arg, err := b.bindExpr(fc.Args[0], &scope{})
	if err != nil {
		return nil, err
	}
	if arg, err = expr.Cast(arg, textArrayType); err != nil {
		return nil, err
	}
	part := func(value bool) func([]types.Datum) ([]types.Datum, error) {
		return func(v []types.Datum) ([]types.Datum, error) {
			if v[0].IsNull() {
				return nil, nil
			}
			items, err := types.SplitArray(v[0].S)
			if err != nil {
				return nil, err
			}
			out := make([]types.Datum, len(items))
			for i, it := range items {
				if it.IsNull() {
					out[i] = types.Null
					continue
				}
				name, val, ok := strings.Cut(it.S, "=")
				switch {
				case !value:
					out[i] = str(name)
				case ok:
					out[i] = str(val)
				default:
					out[i] = types.Null
				}
			}
			return out, nil
		}
	}
	args := []expr.Expr{arg}
	return []srfCall{
		{Name: "option_name", Args: args, T: types.Text, rows: part(false)},
		{Name: "option_value", Args: args, T: types.Text, rows: part(true)},
	}, nil
}

// catalogEngine is the engine as package pgcatalog reads it.
type catalogEngine struct{ e *Engine }

func (c catalogEngine) Sequences() []pgcatalog.Sequence {
	var out []pgcatalog.Sequence
	for _, d := range c.e.objects(catalog.KindSequence) {
		q := d.Sequence
		out = append(out, pgcatalog.Sequence{OID: int64(firstUserOID + d.ID), Type: q.Type, Start: q.Start,
			Increment: q.Increment, Max: q.Max, Min: q.Min, Cache: q.Cache, Cycle: q.Cycle})
	}
	return out
}

func (c catalogEngine) OwnedSequences() []pgcatalog.OwnedSequence {
	var out []pgcatalog.OwnedSequence
	for _, t := range c.e.objects(catalog.KindTable) {
		for _, q := range c.e.ownedSequences(t) {
			o := pgcatalog.OwnedSequence{OID: int64(firstUserOID + q.ID), TableOID: int64(firstUserOID + t.ID)}
			for i, col := range t.Columns {
				if col.Name == q.Sequence.OwnedByColumn {
					o.Column = int64(i + 1)
				}
				if col.IdentitySequence == q.Name {
					o.Column, o.Identity = int64(i+1), true
				}
			}
			out = append(out, o)
		}
	}
	return out
}

func (c catalogEngine) Views() []pgcatalog.View {
	var out []pgcatalog.View
	for _, r := range c.e.pgRelations() {
		if r.relkind != "v" && r.relkind != "m" {
			continue
		}
		v := pgcatalog.View{OID: int64(r.oid)}
		for _, in := range r.d.DependsOn {
			if d, ok := c.e.lookup(in); ok {
				v.Reads = append(v.Reads, int64(firstUserOID+d.ID))
			}
		}
		out = append(out, v)
	}
	return out
}

func (c catalogEngine) DefaultSequences() []pgcatalog.DefaultSequence {
	var out []pgcatalog.DefaultSequence
	for _, r := range c.e.pgRelations() {
		for i, col := range r.cols {
			m := defaultSequence.FindStringSubmatch(col.def)
			if m == nil {
				continue
			}
			if q, ok := c.e.lookup(m[1]); ok && q.Kind == catalog.KindSequence {
				out = append(out, pgcatalog.DefaultSequence{AttrdefOID: attrdefOIDBase + int64(r.oid)<<10 + int64(i),
					SequenceOID: int64(firstUserOID + q.ID)})
			}
		}
	}
	return out
}
