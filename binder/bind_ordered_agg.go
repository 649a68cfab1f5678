package binder

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// orderedAggCall binds the aggregates that read their input in order, as
// the front layer spells them (front/rewrite_ordered_agg.go):
//
//	percentile_cont(x, fraction, 'asc'|'desc')   (WITHIN GROUP (ORDER BY x))
//	percentile_disc(x, fraction, 'asc'|'desc')
//	mode(x, 'asc'|'desc')
//	string_agg(a, delimiter [, directions, k1, k2, ...])  (string_agg(a, d ORDER BY k1, k2, ...))
//	array_agg(a [, directions, k1, k2, ...])              (array_agg(a ORDER BY k1, k2, ...))
//	jsonb_agg(a [, directions, k1, k2, ...])              (jsonb_agg(a ORDER BY k1, k2, ...))
//	json_agg(a [, directions, k1, k2, ...])               (json_agg(a ORDER BY k1, k2, ...))
//
//	jsonb_object_agg(k, v [, directions, k1, k2, ...])
//	json_object_agg(k, v [, directions, k1, k2, ...])
//
// directions is one 'asc'|'desc' [' nulls first'|' nulls last'] per key,
// comma separated. Under FILTER, the first argument of array_agg,
// jsonb_agg, json_agg and the object aggregates is streamdb_agg_filter(cond,
// a) (front.AggFilterFunc). Under DISTINCT (a.Distinct, from
// front.AggDistinctFunc) the accumulator lists each value once, and the
// ORDER BY keys must be among the arguments.
//
// The fraction and the delimiter must be constants. Without ORDER BY,
// string_agg and array_agg order by their value (PostgreSQL concatenates
// in an unspecified order), array_agg's NULLs last (first when
// descending); with one they order by its keys (orderedByKeys).
func (b *binder) orderedAggCall(fn string, a *ast.AggregateFuncExpr) (plan.AggCall, error) {
	call := plan.AggCall{Func: fn, Distinct: a.Distinct}
	objectAgg := fn == "jsonb_object_agg" || fn == "json_object_agg"
	if a.Distinct && (fn == "percentile_cont" || fn == "percentile_disc" || fn == "mode") {
		return call, sqlerr.New(sqlerr.SyntaxError, "cannot use DISTINCT with WITHIN GROUP")
	}
	args := a.Args
	min, max := 3, 3
	switch fn {
	case "mode":
		min, max = 2, 2
	case "string_agg", "jsonb_object_agg", "json_object_agg":
		min, max = 2, len(args)
	case "array_agg", "jsonb_agg", "json_agg":
		min, max = 1, len(args)
	}
	if len(args) < min || len(args) > max || len(args) == 3 && (fn == "string_agg" || objectAgg) || len(args) == 2 && (fn == "array_agg" || fn == "jsonb_agg" || fn == "json_agg") {
		return call, b.orderedAggArityError(fn, args)
	}
	inner := &binder{stmt: b.stmt, inAgg: true, corr: b.corr}
	first := args[0]
	var filter expr.Expr // array_agg and jsonb_agg under FILTER
	if f, ok := first.(*ast.FuncCallExpr); ok && f.FnName.L == front.AggFilterFunc && len(f.Args) == 2 {
		c, err := inner.bindExpr(f.Args[0], b.agg.input)
		if err != nil {
			return call, err
		}
		if err := checkAggLevel(fn, c); err != nil {
			return call, err
		}
		if filter, err = BooleanCondition(c, "FILTER"); err != nil {
			return call, err
		}
		first = f.Args[1]
	}
	arg, err := inner.bindExpr(first, b.agg.input)
	if err != nil {
		return call, err
	}
	if err := checkAggLevel(fn, arg); err != nil {
		return call, err
	}
	if arg.Type() == types.Unknown && !objectAgg {
		if arg, err = expr.Cast(arg, types.Text); err != nil {
			return call, err
		}
	}
	// Under DISTINCT, the ORDER BY keys must be among the arguments.
	var distinctArgs []expr.Expr
	if a.Distinct {
		distinctArgs = []expr.Expr{arg}
	}
	if objectAgg {
		pair, v, err := b.objectAggPair(inner, fn, arg, args[1])
		if err != nil {
			return call, err
		}
		if a.Distinct {
			distinctArgs = []expr.Expr{arg, v}
		}
		arg = pair
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
	case "array_agg", "jsonb_agg", "json_agg":
		if len(args) >= 3 || filter != nil {
			dirs, keys := "asc", []ast.ExprNode{first}
			if len(args) >= 3 {
				dirs, keys = constText(args[1]), args[2:]
			}
			keyed, err := b.orderedByKeys(inner, fn, arg, dirs, keys, "", filter, distinctArgs)
			if err != nil || keyed.Func != "" {
				return keyed, err
			}
			desc = dirs == "desc"
		}
	case "jsonb_object_agg", "json_object_agg":
		if len(args) >= 4 {
			keyed, err := b.orderedByKeys(inner, fn, arg, constText(args[2]), args[3:], "", filter, distinctArgs)
			if err != nil || keyed.Func != "" {
				return keyed, err
			}
		}
		if filter != nil {
			if arg, err = expr.Case([]expr.Expr{filter}, []expr.Expr{arg}, nil); err != nil {
				return call, err
			}
		}
	case "string_agg":
		d, ok := args[1].(*test_driver.ValueExpr)
		if !ok || (d.Kind() != test_driver.KindString && d.Kind() != test_driver.KindNull) {
			return call, sqlerr.New(sqlerr.FeatureNotSupported, "the delimiter of string_agg must be a string constant")
		}
		param = d.GetString()
		if len(args) >= 4 {
			keyed, err := b.orderedByKeys(inner, fn, arg, constText(args[2]), args[3:], param, nil, distinctArgs)
			if err != nil || keyed.Func != "" {
				return keyed, err
			}
			desc = constText(args[2]) == "desc"
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

// orderedAggArityError is the error for an ordered aggregate called with
// arguments it does not take, naming their types as written.
func (b *binder) orderedAggArityError(fn string, args []ast.ExprNode) error {
	inner := &binder{stmt: b.stmt, inAgg: true, corr: b.corr}
	written := writtenOrderedAggArgs(fn, args)
	bound := make([]expr.Expr, len(written))
	for i, a := range written {
		e, err := inner.bindExpr(a, b.agg.input)
		if err != nil {
			return err
		}
		bound[i] = e
	}
	return noSuchFunction(fn, bound, orderedAggUsage[fn])
}

// orderedByKeys binds the ORDER BY of string_agg, array_agg or jsonb_agg
// over arg, the value: spec is the keys' directions as the front layer
// spells them, keys the key expressions, param string_agg's delimiter,
// filter the condition of a FILTER (nil for none), distinct the
// arguments of an aggregate with DISTINCT (nil without), among which its
// keys must be, as PostgreSQL requires. An ORDER BY of the
// value alone with its default NULLS order, unfiltered, is the aggregate
// over its sorted values, which the caller binds (the returned call has
// no Func); any other is ordered by keys (exec.KeyedOrderName), its
// argument the keys and the value packed by expr.OrderedArgFunc, NULL
// for a row the filter leaves out.
func (b *binder) orderedByKeys(inner *binder, fn string, arg expr.Expr, spec string, keys []ast.ExprNode, param string, filter expr.Expr, distinct []expr.Expr) (plan.AggCall, error) {
	call := plan.AggCall{Distinct: distinct != nil}
	dirs := strings.Split(spec, ",")
	if len(dirs) != len(keys) {
		return call, sqlerr.New(sqlerr.SyntaxError, "syntax error in the ORDER BY of %s", fn)
	}
	orders := make([]exec.KeyOrder, len(dirs))
	packed := make([]expr.Expr, 0, len(keys)+1)
	plain := len(keys) == 1 && filter == nil
	for i, d := range dirs {
		dir, nulls, _ := strings.Cut(d, " nulls ")
		orders[i].Desc = dir == "desc"
		orders[i].NullsFirst = orders[i].Desc
		if nulls != "" {
			orders[i].NullsFirst = nulls == "first"
		}
		plain = plain && orders[i].NullsFirst == orders[i].Desc
		key, err := inner.bindExpr(keys[i], b.agg.input)
		if err != nil {
			return call, err
		}
		if err := checkAggLevel(fn, key); err != nil {
			return call, err
		}
		if key.Type() == types.Unknown {
			if key, err = expr.Cast(key, types.Text); err != nil {
				return call, err
			}
		}
		if distinct != nil && !slices.ContainsFunc(distinct, func(a expr.Expr) bool { return a.String() == key.String() }) {
			return call, sqlerr.New(sqlerr.InvalidColumnReference, "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
		}
		plain = plain && key.String() == arg.String()
		packed = append(packed, key)
	}
	if plain {
		return call, nil
	}
	packedArg, err := expr.Call(expr.OrderedArgFunc, append(packed, arg))
	if err != nil {
		return call, err
	}
	if filter != nil {
		if packedArg, err = expr.Case([]expr.Expr{filter}, []expr.Expr{packedArg}, nil); err != nil {
			return call, err
		}
	}
	call.Func = exec.KeyedOrderName(fn, orders, arg.Type(), param)
	call.Arg = packedArg
	if _, err := exec.AggResultType(call.Func, packedArg.Type()); err != nil {
		return call, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", fn, arg.Type()).
			WithHint("Write %s", orderedAggUsage[fn])
	}
	return call, nil
}

// objectAggPair binds, with inner, the value of json_object_agg(key, value) or
// jsonb_object_agg and returns their argument, the pair [key, value],
// and the value. The pairs are one value, so the accumulators keep their
// multiset like the other aggregates' values. json_object_agg's pair is
// json text, which keeps a json value as written, and its key is the
// key's text, as PostgreSQL names the member; a NULL key is an error
// (expr.ObjectAggKeyFunc).
func (b *binder) objectAggPair(inner *binder, fn string, key expr.Expr, value ast.ExprNode) (pair, v expr.Expr, err error) {
	if v, err = inner.bindExpr(value, b.agg.input); err != nil {
		return nil, nil, err
	}
	if err := checkAggLevel(fn, v); err != nil {
		return nil, nil, err
	}
	if key.Type() == types.Unknown {
		if key, err = expr.Cast(key, types.Text); err != nil {
			return nil, nil, err
		}
	}
	build := "jsonb_build_array"
	if fn == "json_object_agg" {
		build = "json_build_array"
		if key, err = expr.Cast(key, types.Text); err != nil {
			return nil, nil, err
		}
	}
	if key, err = expr.Call(expr.ObjectAggKeyFunc, []expr.Expr{key}); err != nil {
		return nil, nil, err
	}
	if pair, err = expr.Call(build, []expr.Expr{key, v}); err != nil {
		return nil, nil, err
	}
	return pair, v, nil
}

var orderedAggUsage = map[string]string{
	"array_agg":        "array_agg(expression [ORDER BY expression, ...]).",
	"jsonb_agg":        "jsonb_agg(expression [ORDER BY expression, ...]).",
	"jsonb_object_agg": "jsonb_object_agg(key, value [ORDER BY expression, ...]).",
	"json_agg":         "json_agg(expression [ORDER BY expression, ...]).",
	"json_object_agg":  "json_object_agg(key, value [ORDER BY expression, ...]).",
	"percentile_cont":  "percentile_cont(fraction) WITHIN GROUP (ORDER BY numeric expression).",
	"percentile_disc":  "percentile_disc(fraction) WITHIN GROUP (ORDER BY expression).",
	"mode":             "mode() WITHIN GROUP (ORDER BY expression).",
	"string_agg":       "string_agg(text expression, 'delimiter' [ORDER BY expression, ...]).",
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
