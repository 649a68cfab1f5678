package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// commonType resolves the result type of CASE / COALESCE branches and
// UNION columns as PostgreSQL does: the first non-unknown type, widened
// across numeric branches. Among string types the first one stays (every
// string type converts implicitly to every other, so PostgreSQL's
// select_common_type never leaves it): varchar UNION text is varchar.
func commonType(es []Expr) (types.Type, error) {
	t := types.Unknown
	for _, e := range es {
		et := e.Type()
		switch {
		case et == types.Unknown || et == t:
		case t == types.Unknown:
			t = et
		case t.IsNumeric() && et.IsNumeric(), isDateTime(t) && isDateTime(et):
			// Each type converts implicitly to every later one in
			// implicitOrder and not back, so PostgreSQL's
			// select_common_type picks the latest: bigint and real give
			// real.
			if implicitOrder[et] > implicitOrder[t] {
				t = et
			}
		case t.IsString() && et.IsString():
		case t.IsArray() && et.IsArray():
			elem, err := CommonType([]types.Type{t.Elem(), et.Elem()})
			if err != nil {
				return t, sqlerr.New(sqlerr.DatatypeMismatch, "types %s and %s cannot be matched", t, et)
			}
			t = types.ArrayOf(elem)
		default:
			return t, sqlerr.New(sqlerr.DatatypeMismatch, "types %s and %s cannot be matched", t, et)
		}
	}
	if t == types.Unknown {
		t = types.Text
	}
	return t, nil
}

// implicitOrder ranks the numeric types, and the date/time types, in the
// order of PostgreSQL's implicit casts between them.
var implicitOrder = map[types.Type]int{
	types.Int2: 1, types.Int4: 2, types.Int8: 3, types.Numeric: 4, types.Float4: 5, types.Float8: 6,
	types.Date: 1, types.Timestamp: 2, types.Timestamptz: 3,
}

func isDateTime(t types.Type) bool { return t == types.Date || t.IsTime() }

// CommonType resolves the type that values of all of ts convert to (for
// UNION columns), PostgreSQL style.
func CommonType(ts []types.Type) (types.Type, error) {
	es := make([]Expr, len(ts))
	for i, t := range ts {
		es[i] = &Const{T: t}
	}
	return commonType(es)
}

// Case builds CASE WHEN conds[i] THEN results[i] ... ELSE els END; els may
// be nil (NULL).
func Case(conds, results []Expr, els Expr) (Expr, error) {
	// PostgreSQL resolves the type with the ELSE branch first.
	var all []Expr
	if els != nil {
		all = append(all, els)
	}
	all = append(all, results...)
	t, err := commonType(all)
	if err != nil {
		return nil, err
	}
	args := make([]Expr, 0, 2*len(conds)+1)
	for i := range conds {
		c, err := requireBool(conds[i])
		if err != nil {
			return nil, err
		}
		r, err := Cast(results[i], t)
		if err != nil {
			return nil, err
		}
		args = append(args, c, r)
	}
	if els != nil {
		e, err := Cast(els, t)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	return &Func{Name: "CASE", Args: args, T: t, Lazy: func(a []Expr, row types.Row) (types.Datum, error) {
		i := 0
		for ; i+1 < len(a); i += 2 {
			c, err := a[i].Eval(row)
			if err != nil {
				return types.Null, err
			}
			if !c.IsNull() && c.Bool() {
				return a[i+1].Eval(row)
			}
		}
		if i < len(a) {
			return a[i].Eval(row)
		}
		return types.Null, nil
	}}, nil
}

// Coalesce returns the first non-NULL argument.
func Coalesce(args []Expr) (Expr, error) {
	t, err := commonType(args)
	if err != nil {
		return nil, err
	}
	cast, err := castArgs(args, t)
	if err != nil {
		return nil, err
	}
	return &Func{Name: "COALESCE", Args: cast, T: t, Lazy: func(a []Expr, row types.Row) (types.Datum, error) {
		for _, e := range a {
			v, err := e.Eval(row)
			if err != nil || !v.IsNull() {
				return v, err
			}
		}
		return types.Null, nil
	}}, nil
}

// NullIf returns NULL when a = b, else a.
func NullIf(a, b Expr) (Expr, error) {
	eq, err := Binary("=", a, b)
	if err != nil {
		return nil, err
	}
	ef := eq.(*Func)
	t := ef.Args[0].Type()
	if t == types.Varchar {
		t = types.Text // resolved through text = text, as in PostgreSQL
	}
	return &Func{Name: "NULLIF", Args: ef.Args, T: t, Fn: func(v []types.Datum) (types.Datum, error) {
		r, err := ef.Fn(v)
		if err != nil {
			return types.Null, err
		}
		if !r.IsNull() && r.Bool() {
			return types.Null, nil
		}
		return v[0], nil
	}}, nil
}

// In builds "e IN (list)" with SQL's NULL rules (NOT IN when not is set).
func In(e Expr, list []Expr, not bool) (Expr, error) {
	// The equalities are ORed as a balanced tree, so that a list of any
	// length nests only log2(len) deep (evaluation recurses per level).
	terms := make([]Expr, len(list))
	for i, item := range list {
		eq, err := Binary("=", e, item)
		if err != nil {
			return nil, err
		}
		terms[i] = eq
	}
	for len(terms) > 1 {
		next := terms[:0:0]
		for i := 0; i < len(terms); i += 2 {
			if i+1 == len(terms) {
				next = append(next, terms[i])
				continue
			}
			or, err := Binary("OR", terms[i], terms[i+1])
			if err != nil {
				return nil, err
			}
			next = append(next, or)
		}
		terms = next
	}
	var out Expr
	if len(terms) == 1 {
		out = terms[0]
	}
	if not {
		return Not(out)
	}
	return out, nil
}
