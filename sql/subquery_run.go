package sql

import (
	"streamdb/binder"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// withSubqueries is root and the plans of all its subqueries, nested ones
// too: what a query reads.
func withSubqueries(root plan.Node) []plan.Node {
	all := []plan.Node{root}
	for i := 0; i < len(all); i++ {
		all = append(all, binder.SubqueryPlans(all[i])...)
	}
	return all
}

// resolveSubqueries returns a copy of n in which each subquery is replaced
// by its result: run executes a subquery's plan (with the query's
// parameters and reader) and returns its rows. An uncorrelated subquery
// runs once; a correlated one becomes a call that runs it once per
// distinct set of outer values (memoized for this execution) and
// evaluates the result over the row.
func resolveSubqueries(n plan.Node, run func(plan.Node) ([]types.Row, error)) (plan.Node, error) {
	return binder.MapPlan(n, func(e expr.Expr) (expr.Expr, error) {
		return resolveExprSubqueries(e, run)
	}, nil)
}

// resolveExprSubqueries is resolveSubqueries for one expression: a copy
// of e in which each subquery is replaced by its result (e itself when it
// has none).
func resolveExprSubqueries(e expr.Expr, run func(plan.Node) ([]types.Row, error)) (expr.Expr, error) {
	if e == nil || !binder.HasSubquery(e) {
		return e, nil
	}
	var err error
	out := expr.Walk(expr.Clone(e), func(x expr.Expr) expr.Expr {
		if err != nil {
			return x
		}
		var res expr.Expr
		if sq, outer, ok := expr.SubqueryOf(x); ok {
			if len(outer) > 0 {
				return correlatedCall(sq, outer, nil, "", run)
			}
			var rows []types.Row
			if rows, err = run(sq.Plan.(plan.Node)); err != nil {
				return x
			}
			if sq.Kind == expr.SubqueryExists {
				return sq.ResolveExists(rows)
			}
			if res, err = sq.ResolveScalar(rows); err != nil {
				return x
			}
			return res
		}
		f, ok := x.(*expr.Func)
		if !ok {
			return x
		}
		if _, _, quantified := expr.QuantifiedOp(f.Name); !quantified || len(f.Args) != 2 {
			return x
		}
		sq, outer, ok := expr.SubqueryOf(f.Args[1])
		if !ok {
			return x
		}
		if len(outer) > 0 {
			return correlatedCall(sq, outer, f.Args[0], f.Name, run)
		}
		var rows []types.Row
		if rows, err = run(sq.Plan.(plan.Node)); err != nil {
			return x
		}
		if res, err = expr.ResolveQuantified(f.Name, f.Args[0], sq.T, rows); err != nil {
			return x
		}
		return res
	})
	return out, err
}

// correlatedCall is the per-row form of correlated subquery sq: a call
// whose arguments are the outer values (and, for a quantified comparison
// named quant, its left operand first). For each row it binds the outer
// values into the subquery's plan, runs it (once per distinct values) and
// evaluates what the rows resolve to.
func correlatedCall(sq *expr.Subquery, outer []expr.Expr, left expr.Expr, quant string, run func(plan.Node) ([]types.Row, error)) expr.Expr {
	args := append([]expr.Expr(nil), outer...)
	first := 0
	if left != nil {
		args = append([]expr.Expr{left}, args...)
		first = 1
	}
	memo := map[string]expr.Expr{}
	var key []byte
	name := "subquery"
	if quant != "" {
		name = quant
	}
	return &expr.Func{Name: name, T: sq.T, Args: args, Lazy: func(args []expr.Expr, row types.Row) (types.Datum, error) {
		vals := make([]types.Datum, len(args)-first)
		key = key[:0]
		for i, a := range args[first:] {
			v, err := a.Eval(row)
			if err != nil {
				return types.Null, err
			}
			vals[i] = v
			key = exec.AppendKey(key, v)
		}
		res, ok := memo[string(key)]
		if !ok {
			p, _ := binder.MapPlan(sq.Plan.(plan.Node), func(e expr.Expr) (expr.Expr, error) {
				if e == nil {
					return nil, nil
				}
				return expr.BindOuter(e, vals), nil
			}, nil)
			rows, err := run(p)
			if err != nil {
				return types.Null, err
			}
			switch {
			case quant != "":
				// The left operand is evaluated over the row each time;
				// the resolved comparison reads it as column 0.
				res, err = expr.ResolveQuantified(quant, &expr.ColRef{Idx: 0, T: args[0].Type(), Name: "x"}, sq.T, rows)
			case sq.Kind == expr.SubqueryExists:
				res = sq.ResolveExists(rows)
			default:
				res, err = sq.ResolveScalar(rows)
			}
			if err != nil {
				return types.Null, err
			}
			memo[string(key)] = res
		}
		if quant == "" {
			return res.Eval(nil)
		}
		x, err := args[0].Eval(row)
		if err != nil {
			return types.Null, err
		}
		return res.Eval(types.Row{x})
	}}
}
