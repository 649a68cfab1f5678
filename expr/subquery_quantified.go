package expr

import (
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// Quantified comparisons with a subquery: x IN (SELECT ...), x NOT IN
// (SELECT ...), x op ANY (SELECT ...), x op ALL (SELECT ...). They are
// bound as a Func of the Quantifier name whose Args are the left operand
// and the subquery.

// Quantifier returns the name of the quantified comparison x op ANY/ALL.
func Quantifier(op string, all bool) string {
	if all {
		return op + " ALL"
	}
	return op + " ANY"
}

// QuantifiedOp splits a quantified comparison's name into its operator
// and whether it is ALL; IN is = ANY and NOT IN is <> ALL, as in SQL.
func QuantifiedOp(name string) (op string, all bool, ok bool) {
	switch name {
	case InSubquery:
		return "=", false, true
	case NotInSubquery:
		return "<>", true, true
	}
	if op, ok := strings.CutSuffix(name, " ANY"); ok {
		return op, false, true
	}
	if op, ok := strings.CutSuffix(name, " ALL"); ok {
		return op, true, true
	}
	return "", false, false
}

// Quantified binds left op ANY/ALL over the values of sub; it checks that
// the comparison exists for the two types.
func Quantified(name string, left Expr, sub Expr) (Expr, error) {
	op, _, ok := QuantifiedOp(name)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "unknown quantified comparison %s", name)
	}
	if _, err := quantifiedCmp(op, left.Type(), sub.Type()); err != nil {
		return nil, err
	}
	return &Func{Name: name, Infix: true, T: types.Bool, Args: []Expr{left, sub},
		Fn: func([]types.Datum) (types.Datum, error) {
			return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries are supported in queries (SELECT), not in this statement yet")
		}}, nil
}

// quantifiedCmp is the comparison of a left value (column 0) with one
// subquery value (column 1).
func quantifiedCmp(op string, l, r types.Type) (Expr, error) {
	return Binary(op, &ColRef{Idx: 0, T: l, Name: "x"}, &ColRef{Idx: 1, T: r, Name: "y"})
}

// ResolveQuantified is the quantified comparison named name of left with
// the first column of rows, with SQL's NULL rules: ANY is true if some
// comparison is true, else NULL if some is NULL, else false (false for no
// rows); ALL is false if some comparison is false, else NULL if some is
// NULL, else true (true for no rows).
func ResolveQuantified(name string, left Expr, t types.Type, rows []types.Row) (Expr, error) {
	op, all, ok := QuantifiedOp(name)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "unknown quantified comparison %s", name)
	}
	if len(rows) == 0 {
		return &Const{D: types.NewBool(all), T: types.Bool}, nil
	}
	cmp, err := quantifiedCmp(op, left.Type(), t)
	if err != nil {
		return nil, err
	}
	vals := make([]types.Datum, len(rows))
	for i, r := range rows {
		vals[i] = r[0]
	}
	return &Func{Name: name, Infix: true, T: types.Bool, Args: []Expr{left, &Const{D: types.Null, T: t}},
		Lazy: func(args []Expr, row types.Row) (types.Datum, error) {
			x, err := args[0].Eval(row)
			if err != nil {
				return types.Null, err
			}
			pair := types.Row{x, types.Null}
			sawNull := false
			for _, v := range vals {
				pair[1] = v
				c, err := cmp.Eval(pair)
				if err != nil {
					return types.Null, err
				}
				switch {
				case c.IsNull():
					sawNull = true
				case c.Bool() != all:
					return types.NewBool(!all), nil
				}
			}
			if sawNull {
				return types.Null, nil
			}
			return types.NewBool(all), nil
		}}, nil
}
