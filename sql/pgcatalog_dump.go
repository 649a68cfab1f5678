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
		cols: cols("oid", types.Int8, "rulename", types.Text, "ev_class", types.Int8, "ev_type", types.Text,
			"ev_enabled", types.Text, "is_instead", types.Bool, "ev_qual", types.Text, "ev_action", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				if r.relkind != "v" && r.relkind != "m" {
					continue
				}
				rows = append(rows, types.Row{intD(viewRuleOID(r)), str("_RETURN"), intD(int64(r.oid)), str("1"),
					str("O"), types.NewBool(true), types.Null, types.Null})
			}
			return rows
		},
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

// viewRuleOID is the OID of a view's _RETURN rule in pg_rewrite.
func viewRuleOID(r pgRelation) int64 { return int64(r.oid) + ruleOIDBase }

// ruleOIDBase offsets a view's OID to its rule's OID (below pkOIDBase).
const ruleOIDBase = 1 << 29

// pgRewriteOID is pg_rewrite's OID, the classid of a rule.
const pgRewriteOID = 2618

// viewDepends are pg_depend's rows of the views' rules, as PostgreSQL
// records them: the rule is part of its view ('i') and depends on each
// relation its query reads ('n'). pg_dump orders a view after what it
// reads by them.
func (e *Engine) viewDepends() []types.Row {
	var rows []types.Row
	for _, r := range e.pgRelations() {
		if r.relkind != "v" && r.relkind != "m" {
			continue
		}
		rule := intD(viewRuleOID(r))
		rows = append(rows, types.Row{intD(pgRewriteOID), rule, intD(0), intD(pgClassOID), intD(int64(r.oid)), intD(0), str("i")})
		for _, in := range r.d.DependsOn {
			if d, ok := e.lookup(in); ok {
				rows = append(rows, types.Row{intD(pgRewriteOID), rule, intD(0), intD(pgClassOID),
					intD(int64(firstUserOID + d.ID)), intD(0), str("n")})
			}
		}
	}
	return rows
}

// pgAttrdefOID is pg_attrdef's OID, the classid of a column default.
const pgAttrdefOID = 2604

// defaultSequence finds the sequence a DEFAULT nextval('name') names.
var defaultSequence = regexp.MustCompile(`nextval\('(?:public\.)?"?([^'"]+)"?'`)

// defaultDepends are pg_depend's rows of the column defaults that call
// nextval on a sequence ('n', as PostgreSQL records them): pg_dump then
// creates the sequence before it sets the default.
func (e *Engine) defaultDepends() []types.Row {
	var rows []types.Row
	for _, r := range e.pgRelations() {
		for i, c := range r.cols {
			m := defaultSequence.FindStringSubmatch(c.def)
			if m == nil {
				continue
			}
			q, ok := e.lookup(m[1])
			if !ok || q.Kind != catalog.KindSequence {
				continue
			}
			rows = append(rows, types.Row{intD(pgAttrdefOID), intD(attrdefOIDBase + int64(r.oid)<<10 + int64(i)), intD(0),
				intD(pgClassOID), intD(int64(firstUserOID + q.ID)), intD(0), str("n")})
		}
	}
	return rows
}

// sequenceDepends are pg_depend's rows of the sequences owned by a
// table column: deptype 'i' for an identity column's sequence, 'a' for
// a serial column's or one set by OWNED BY, as PostgreSQL records them
// (pg_dump dumps an identity sequence with its column, and an owned
// sequence with ALTER SEQUENCE ... OWNED BY).
func (e *Engine) sequenceDepends() []types.Row {
	var rows []types.Row
	for _, t := range e.objects(catalog.KindTable) {
		for _, q := range e.ownedSequences(t) {
			col := q.Sequence.OwnedByColumn
			attnum, deptype := int64(0), "a"
			for i, c := range t.Columns {
				if c.Name == col {
					attnum = int64(i + 1)
				}
				if c.IdentitySequence == q.Name {
					attnum, deptype = int64(i+1), "i"
				}
			}
			rows = append(rows, types.Row{intD(pgClassOID), intD(int64(firstUserOID + q.ID)), intD(0),
				intD(pgClassOID), intD(int64(firstUserOID + t.ID)), intD(attnum), str(deptype)})
		}
	}
	return rows
}

// pgClassOID is pg_class's own OID, the classid of a relation.
const pgClassOID = 1259

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
