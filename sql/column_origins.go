package sql

import (
	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/types"
)

// A query's result columns that are a table's, a stream's or a
// materialized view's columns unchanged carry the relation's OID (as
// pg_class shows it) and the column's number (pg_attribute.attnum) in
// RowDescription, as PostgreSQL's do; computed columns carry zeros.

func (p *prepared) ColumnOrigins() []pgwire.ColumnOrigin { return p.origins }

// queryColumns are a query's result columns with the declared size of
// the relation columns they come from (character varying(n),
// numeric(p, s), timestamp(p): RowDescription's typmod), and their
// origins.
func queryColumns(root plan.Node) ([]types.Column, []pgwire.ColumnOrigin) {
	cols := root.Schema()
	src := planSources(root)
	if src == nil {
		return cols, nil
	}
	// A copy, non-nil even when empty (SELECT FROM t has zero columns,
	// not none).
	cols = append(make([]types.Column, 0, len(cols)), cols...)
	origins := make([]pgwire.ColumnOrigin, len(src))
	for i, s := range src {
		origins[i] = s.origin
		// Only sizes that change no output: character(n) pads values,
		// which the binder decides.
		if s.origin.TableOID != 0 && cols[i].Type == s.typ && cols[i].Mod.IsZero() && !s.mod.Fixed {
			cols[i].Mod.Length, cols[i].Mod.Precision, cols[i].Mod.Scale = s.mod.Length, s.mod.Precision, s.mod.Scale
			cols[i].Mod.TimePrecision, cols[i].Mod.HasTimePrecision = s.mod.TimePrecision, s.mod.HasTimePrecision
		}
	}
	return cols, origins
}

// source is where a result column comes from: a relation's column, with
// its declared type.
type source struct {
	origin pgwire.ColumnOrigin
	typ    types.Type
	mod    types.Modifier
}

// planSources gives the source of each of n's output columns, nil when
// none has one.
func planSources(n plan.Node) []source {
	var out []source
	switch x := n.(type) {
	case *plan.Scan:
		d := x.Object
		if d == nil || d.Kind == catalog.KindSystem {
			return nil
		}
		out = make([]source, len(x.Cols))
		for i, c := range x.Cols {
			for j, dc := range d.Columns {
				if dc.Name == c.Name {
					t, mod, err := types.ParseWithModifier(dc.Type)
					if err == nil {
						out[i] = source{origin: pgwire.ColumnOrigin{TableOID: firstUserOID + d.ID, Attr: int16(j + 1)}, typ: t, mod: mod}
					}
					break
				}
			}
		}
	case *plan.Filter:
		return planSources(x.Input)
	case *plan.Sort:
		return planSources(x.Input)
	case *plan.Limit:
		return planSources(x.Input)
	case *plan.Project:
		in := planSources(x.Input)
		if in == nil {
			return nil
		}
		out = make([]source, len(x.Exprs))
		for i, e := range x.Exprs {
			if c, ok := e.(*expr.ColRef); ok && c.Idx < len(in) {
				out[i] = in[c.Idx]
			}
		}
	case *plan.Join:
		l, r := planSources(x.Left), planSources(x.Right)
		if l == nil && r == nil {
			return nil
		}
		out = make([]source, len(x.Cols))
		nl := len(x.Left.Schema())
		copy(out, l)
		if nl <= len(out) {
			copy(out[nl:], r)
		}
	default:
		return nil
	}
	if len(out) != len(n.Schema()) {
		return nil
	}
	return out
}
