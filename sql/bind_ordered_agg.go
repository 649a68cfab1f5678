package sql

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// orderedAggCall binds the aggregates that read their input in order, as
// the front layer spells them (sql/front/rewrite_ordered_agg.go):
//
//	percentile_cont(x, fraction, 'asc'|'desc')   (WITHIN GROUP (ORDER BY x))
//	percentile_disc(x, fraction, 'asc'|'desc')
//	mode(x, 'asc'|'desc')
//	string_agg(a, delimiter [, 'asc'|'desc', k])  (string_agg(a, d ORDER BY k))
//	array_agg(a [, 'asc'|'desc', k])              (array_agg(a ORDER BY k))
//	jsonb_agg(a [, 'asc'|'desc', k])              (jsonb_agg(a ORDER BY k))
//	jsonb_object_agg(k, v)
//
// The fraction and the delimiter must be constants; string_agg orders by
// its value (PostgreSQL, without ORDER BY, concatenates in an unspecified
// order), so an ORDER BY of another expression is refused; array_agg
// likewise, its NULLs last (first when descending).
func (b *binder) orderedAggCall(fn string, a *ast.AggregateFuncExpr) (plan.AggCall, error) {
	call := plan.AggCall{Func: fn}
	if a.Distinct {
		return call, sqlerr.New(sqlerr.FeatureNotSupported, "DISTINCT is not supported in %s", fn)
	}
	args := a.Args
	min, max := 3, 3
	switch fn {
	case "mode":
		min, max = 2, 2
	case "string_agg":
		min, max = 2, 4
	case "array_agg", "jsonb_agg":
		min, max = 1, 3
	case "jsonb_object_agg":
		min, max = 2, 2
	}
	if len(args) < min || len(args) > max || len(args) == 3 && fn == "string_agg" || len(args) == 2 && (fn == "array_agg" || fn == "jsonb_agg") {
		return call, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", fn, len(args)).
			WithHint("Write %s", orderedAggUsage[fn])
	}
	inner := &binder{stmt: b.stmt, inAgg: true, corr: b.corr}
	arg, err := inner.bindExpr(args[0], b.agg.input)
	if err != nil {
		return call, err
	}
	if err := checkAggLevel(fn, arg); err != nil {
		return call, err
	}
	if fn == "jsonb_object_agg" {
		// The pairs are one value, [key, value]: the accumulator keeps
		// their multiset like the others' values.
		v, err := inner.bindExpr(args[1], b.agg.input)
		if err != nil {
			return call, err
		}
		if err := checkAggLevel(fn, v); err != nil {
			return call, err
		}
		if arg, err = expr.Call("jsonb_build_array", []expr.Expr{arg, v}); err != nil {
			return call, err
		}
	}
	if arg.Type() == types.Unknown {
		if arg, err = expr.Cast(arg, types.Text); err != nil {
			return call, err
		}
	}
	desc := false
	param := ""
	switch fn {
	case "mode":
		desc = constText(args[1]) == "desc"
	case "percentile_cont", "percentile_disc":
		desc = constText(args[2]) == "desc"
		f, ok := constNumber(args[1])
		if !ok {
			return call, sqlerr.New(sqlerr.FeatureNotSupported, "the fraction of %s must be a constant", fn)
		}
		if f < 0 || f > 1 {
			return call, sqlerr.New(sqlerr.NumericValueOutOfRange, "percentile value %s is not between 0 and 1", strconv.FormatFloat(f, 'g', -1, 64))
		}
		param = strconv.FormatFloat(f, 'g', -1, 64)
	case "array_agg", "jsonb_agg":
		if len(args) == 3 {
			desc = constText(args[1]) == "desc"
			if err := sameOrderKey(inner, b, fn, arg, args[2]); err != nil {
				return call, err
			}
		}
	case "string_agg":
		d, ok := args[1].(*test_driver.ValueExpr)
		if !ok || (d.Kind() != test_driver.KindString && d.Kind() != test_driver.KindNull) {
			return call, sqlerr.New(sqlerr.FeatureNotSupported, "the delimiter of string_agg must be a string constant")
		}
		param = d.GetString()
		if len(args) == 4 {
			desc = constText(args[2]) == "desc"
			if err := sameOrderKey(inner, b, fn, arg, args[3]); err != nil {
				return call, err
			}
		}
	}
	call.Func = exec.OrderedSetName(fn, desc, param)
	call.Arg = arg
	if _, err := exec.AggResultType(call.Func, arg.Type()); err != nil {
		return call, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", fn, arg.Type()).
			WithHint("Write %s", orderedAggUsage[fn])
	}
	return call, nil
}

// sameOrderKey refuses an ORDER BY inside fn that is not fn's argument.
func sameOrderKey(inner, b *binder, fn string, arg expr.Expr, k ast.ExprNode) error {
	key, err := inner.bindExpr(k, b.agg.input)
	if err != nil {
		return err
	}
	if key.String() != arg.String() {
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s can order only by the value it aggregates (%s)", fn, arg.String()).
			WithHint("Order by the aggregated expression, or aggregate in a subquery ordered as you need.")
	}
	return nil
}

var orderedAggUsage = map[string]string{
	"array_agg":        "array_agg(expression [ORDER BY the same expression]).",
	"jsonb_agg":        "jsonb_agg(expression [ORDER BY the same expression]).",
	"jsonb_object_agg": "jsonb_object_agg(key, value).",
	"percentile_cont":  "percentile_cont(fraction) WITHIN GROUP (ORDER BY numeric expression).",
	"percentile_disc":  "percentile_disc(fraction) WITHIN GROUP (ORDER BY expression).",
	"mode":             "mode() WITHIN GROUP (ORDER BY expression).",
	"string_agg":       "string_agg(text expression, 'delimiter' [ORDER BY the same expression]).",
}

// constText is the value of a string literal, "" for anything else.
func constText(n ast.ExprNode) string {
	if v, ok := n.(*test_driver.ValueExpr); ok && v.Kind() == test_driver.KindString {
		return v.GetString()
	}
	return ""
}

// constNumber is the value of a number literal.
func constNumber(n ast.ExprNode) (float64, bool) {
	e, err := literalOf(n)
	if err != nil {
		return 0, false
	}
	switch {
	case e.D.K == types.KindInt:
		return float64(e.D.I), true
	case e.D.K == types.KindFloat:
		return e.D.F, true
	case e.D.K == types.KindDecimal:
		f, err := e.D.D.Float64()
		return f, err == nil
	}
	return 0, false
}

func literalOf(n ast.ExprNode) (*expr.Const, error) {
	v, ok := n.(*test_driver.ValueExpr)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "not a literal")
	}
	e, err := literal(v)
	if err != nil {
		return nil, err
	}
	c, ok := e.(*expr.Const)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "not a literal")
	}
	return c, nil
}
