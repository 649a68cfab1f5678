package binder

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// bindWindowFunc binds a window function other than a frameless ranking
// one: lag, lead, first_value, last_value, nth_value, ntile,
// percent_rank, cume_dist, and aggregates OVER a window, with ROWS or
// RANGE frames. It becomes a plan.WindowFunc, which ad-hoc queries run;
// a materialized view refuses it (checkStreamable).
func (sb *selectBinder) bindWindowFunc(b *binder, w *ast.WindowFuncExpr, spec *ast.WindowSpec, input plan.Node, in *scope) (*plan.WindowFunc, error) {
	fn := strings.ToLower(w.Name)
	if w.IgnoreNull || w.FromLast {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "IGNORE NULLS and FROM LAST are not supported")
	}
	wf := &plan.WindowFunc{Input: input, Func: fn}
	var err error
	if wf.PartitionBy, err = bindWindowPartition(b, spec, in); err != nil {
		return nil, err
	}
	if wf.Order, err = bindWindowOrder(b, spec, in); err != nil {
		return nil, err
	}
	if wf.Frame, err = bindFrame(b, spec, wf.Order, in); err != nil {
		return nil, err
	}
	wargs := windowArgs(w.Args)
	args := make([]expr.Expr, len(wargs))
	for i, a := range wargs {
		if fn == "count" && len(wargs) == 1 && isCountStar(a) {
			args = nil
			break
		}
		if args[i], err = b.bindExpr(a, in); err != nil {
			return nil, err
		}
	}
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return noSuchFunction(fn, args, "")
		}
		return nil
	}
	var t types.Type
	switch fn {
	case plan.RowNumber, plan.Rank, plan.DenseRank, "percent_rank", "cume_dist":
		if err := nargs(0, 0); err != nil {
			return nil, err
		}
		t = types.Int8
		if fn == "percent_rank" || fn == "cume_dist" {
			t = types.Float8
		}
	case "ntile":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		if args[0], err = expr.Cast(args[0], types.Int8); err != nil {
			return nil, err
		}
		t = types.Int4
	case "lag", "lead", "first_value", "last_value", "nth_value":
		lo, hi := 1, 3
		switch fn {
		case "first_value", "last_value":
			hi = 1
		case "nth_value":
			lo, hi = 2, 2
		}
		if err := nargs(lo, hi); err != nil {
			return nil, err
		}
		if len(args) > 2 {
			// lag and lead take (anycompatible, integer, anycompatible):
			// the value and the default share a type, as in PostgreSQL.
			ct, err := expr.CommonType([]types.Type{args[0].Type(), args[2].Type()})
			if err != nil {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s, integer, %s) does not exist", fn, args[0].Type(), args[2].Type())
			}
			if ct != types.Unknown {
				if args[0], err = expr.Cast(args[0], ct); err != nil {
					return nil, err
				}
			}
		}
		if args[0].Type() == types.Unknown {
			if len(args) < 3 {
				// An anyelement argument must have a type: PostgreSQL
				// does not take text for an untyped literal here.
				return nil, sqlerr.New(sqlerr.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
			}
			if args[0], err = expr.Cast(args[0], types.Text); err != nil {
				return nil, err
			}
		}
		t = args[0].Type()
		if len(args) > 1 {
			if args[1], err = expr.Cast(args[1], types.Int8); err != nil {
				return nil, err
			}
		}
		if len(args) > 2 {
			if args[2], err = expr.Cast(args[2], t); err != nil {
				return nil, err
			}
		}
	default:
		if fn, err = windowAggregate(fn, w.Distinct); err != nil {
			return nil, err
		}
		call := plan.AggCall{Func: fn}
		if args != nil {
			if err := nargs(1, 1); err != nil {
				return nil, err
			}
			call.Arg = args[0]
			if call.Arg.Type() == types.Unknown {
				if call.Arg, err = expr.Cast(call.Arg, unknownAggArgType(fn)); err != nil {
					return nil, err
				}
			}
			if call.Arg, err = timeAggArg(fn, call.Arg); err != nil {
				return nil, err
			}
		}
		argType := types.Unknown
		if call.Arg != nil {
			argType = call.Arg.Type()
		}
		if call.T, err = exec.AggResultType(fn, argType); err != nil {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "%s", err.Error())
		}
		t = call.T
		wf.Agg = &call
		args = nil
	}
	wf.Args = args
	wf.Cols = append(append([]types.Column{}, input.Schema()...), types.Column{Name: hiddenWindowColumn(strings.ToLower(w.Name), input), Type: t})
	return wf, nil
}

// windowArgs is the arguments of a window call, unpacked from the
// front layer's front.WindowArgsFunc(...) (lag(v, -1)).
func windowArgs(args []ast.ExprNode) []ast.ExprNode {
	if len(args) == 1 {
		if f, ok := args[0].(*ast.FuncCallExpr); ok && f.FnName.L == front.WindowArgsFunc {
			return f.Args
		}
	}
	return args
}

// windowAggregate is the aggregate an OVER call names, or an error for a
// name that is no window function.
func windowAggregate(fn string, distinct bool) (string, error) {
	switch fn {
	case "count", "sum", "avg", "min", "max", "var_pop", "var_samp", "stddev_pop", "stddev_samp":
	default:
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "window function %s() is not supported", fn).
			WithHint("Window functions: row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag, lead, first_value, last_value, nth_value, and count, sum, avg, min, max, stddev_pop, stddev_samp, var_pop, var_samp OVER (...).")
	}
	if distinct {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions")
	}
	return fn, nil
}

// bindFrame reads a frame clause, or gives PostgreSQL's default (RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), checking its bounds as
// PostgreSQL does.
func bindFrame(b *binder, spec *ast.WindowSpec, order []plan.SortKey, in *scope) (plan.Frame, error) {
	f := plan.Frame{Start: plan.FrameBound{Kind: plan.UnboundedPreceding}, End: plan.FrameBound{Kind: plan.CurrentRow}}
	fc := spec.Frame
	if fc == nil {
		return f, nil
	}
	switch fc.Type {
	case ast.Rows:
		f.Rows = true
	case ast.Ranges:
	default:
		if len(order) == 0 {
			return f, sqlerr.New(sqlerr.WindowingError, "GROUPS mode requires an ORDER BY clause")
		}
		f.Groups = true
	}
	var err error
	if f.Start, err = bindFrameBound(b, &fc.Extent.Start, "starting"); err != nil {
		return f, err
	}
	if f.End, err = bindFrameBound(b, &fc.Extent.End, "ending"); err != nil {
		return f, err
	}
	switch {
	case f.Start.Kind == plan.UnboundedFollowing:
		return f, sqlerr.New(sqlerr.WindowingError, "frame start cannot be UNBOUNDED FOLLOWING")
	case f.End.Kind == plan.UnboundedPreceding:
		return f, sqlerr.New(sqlerr.WindowingError, "frame end cannot be UNBOUNDED PRECEDING")
	case f.Start.Kind == plan.CurrentRow && f.End.Kind == plan.OffsetPreceding:
		return f, sqlerr.New(sqlerr.WindowingError, "frame starting from current row cannot have preceding rows")
	case f.Start.Kind == plan.OffsetFollowing && (f.End.Kind == plan.OffsetPreceding || f.End.Kind == plan.CurrentRow):
		return f, sqlerr.New(sqlerr.WindowingError, "frame starting from following row cannot have preceding rows")
	}
	if f.Rows || f.Groups {
		for _, b := range []plan.FrameBound{f.Start, f.End} {
			if (b.Kind == plan.OffsetPreceding || b.Kind == plan.OffsetFollowing) && b.Offset.K != types.KindInt {
				return f, sqlerr.New(sqlerr.FeatureNotSupported, "a ROWS or GROUPS frame offset must be an integer")
			}
		}
		return f, nil
	}
	offset := func(k plan.FrameBoundKind) bool { return k == plan.OffsetPreceding || k == plan.OffsetFollowing }
	if !offset(f.Start.Kind) && !offset(f.End.Kind) {
		return f, nil
	}
	if len(order) != 1 {
		return f, sqlerr.New(sqlerr.WindowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
	}
	key := order[0]
	if !key.Expr.Type().IsNumeric() {
		return f, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is supported for numeric ORDER BY columns only, not %s", key.Expr.Type()).
			WithHint("Use ROWS, or order by a number (such as extract(epoch from the timestamp)).")
	}
	// The key value a bound stands at: preceding rows have smaller keys
	// ascending, larger descending.
	boundExpr := func(fb plan.FrameBound) (expr.Expr, error) {
		if !offset(fb.Kind) {
			return nil, nil
		}
		op := "+"
		if (fb.Kind == plan.OffsetPreceding) != key.Desc {
			op = "-"
		}
		return expr.Binary(op, key.Expr, &expr.Const{D: fb.Offset, T: fb.OffsetType})
	}
	if f.RangeStart, err = boundExpr(f.Start); err != nil {
		return f, err
	}
	f.RangeEnd, err = boundExpr(f.End)
	return f, err
}

func bindFrameBound(b *binder, fb *ast.FrameBound, which string) (plan.FrameBound, error) {
	switch {
	case fb.Type == ast.CurrentRow:
		return plan.FrameBound{Kind: plan.CurrentRow}, nil
	case fb.UnBounded && fb.Type == ast.Preceding:
		return plan.FrameBound{Kind: plan.UnboundedPreceding}, nil
	case fb.UnBounded:
		return plan.FrameBound{Kind: plan.UnboundedFollowing}, nil
	}
	kind := plan.OffsetPreceding
	if fb.Type == ast.Following {
		kind = plan.OffsetFollowing
	}
	if fb.Unit != ast.TimeUnitInvalid || fb.Expr == nil {
		return plan.FrameBound{}, sqlerr.New(sqlerr.FeatureNotSupported, "frame offsets in time units are not supported; use a number")
	}
	e, err := b.bindExpr(fb.Expr, &scope{})
	if err != nil {
		return plan.FrameBound{}, err
	}
	v, err := e.Eval(nil)
	if err != nil {
		return plan.FrameBound{}, err
	}
	if v.IsNull() {
		return plan.FrameBound{}, sqlerr.New(sqlerr.NullValueNotAllowed, "frame %s offset must not be null", which)
	}
	neg := false
	switch v.K {
	case types.KindInt:
		neg = v.I < 0
	case types.KindFloat:
		neg = v.F < 0
	case types.KindDecimal:
		neg = v.D.Negative
	}
	if neg {
		return plan.FrameBound{}, sqlerr.New(sqlerr.InvalidPrecedingOrFollowingSize, "frame %s offset must not be negative", which)
	}
	return plan.FrameBound{Kind: kind, Offset: v, OffsetType: e.Type()}, nil
}
