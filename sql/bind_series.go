package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// generate_series(start, stop [, step]) in FROM of ad-hoc queries (the
// front layer turns it into SELECT streamdb_generate_series(...) AS col),
// and as the only item of a SELECT without FROM. Over integers (int4, or
// int8 if an argument is) and numeric the step defaults to 1; over
// timestamps it is an interval. The series is generated when the query
// runs (its arguments may be parameters) and is at most maxSeriesRows
// rows.

// maxSeriesRows bounds one series, so that a mistaken bound fails (54000)
// instead of filling memory.
const maxSeriesRows = 10_000_000

// seriesNode is a generate_series call, or with Unnest an unnest call
// (bind_unnest.go); Args are constant expressions.
type seriesNode struct {
	Args   []expr.Expr
	Cols   []types.Column
	Unnest bool
}

func (s *seriesNode) Schema() []types.Column { return s.Cols }
func (s *seriesNode) Children() []plan.Node  { return nil }
func (s *seriesNode) Describe() string {
	d := "GenerateSeries("
	if s.Unnest {
		d = "Unnest("
	}
	for i, a := range s.Args {
		if i > 0 {
			d += ", "
		}
		d += a.String()
	}
	return d + ")"
}

// seriesCall returns the generate_series call of a SELECT that is one,
// and the name of its column.
func seriesCall(sel *ast.SelectStmt) (*ast.FuncCallExpr, string, bool) {
	return soleFunctionCall(sel, front.SeriesFunc, "generate_series")
}

// soleFunctionCall returns the call of a SELECT whose only item is a call
// of the function named internal (the front layer's name for it in FROM)
// or name, with no FROM or other clause, and the name of its column.
func soleFunctionCall(sel *ast.SelectStmt, internal, name string) (*ast.FuncCallExpr, string, bool) {
	if sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil ||
		sel.Limit != nil || sel.Distinct || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
		return nil, "", false
	}
	f := sel.Fields.Fields[0]
	call, ok := f.Expr.(*ast.FuncCallExpr)
	if !ok || (call.FnName.L != internal && call.FnName.L != name) {
		return nil, "", false
	}
	if f.AsName.O != "" {
		name = f.AsName.O
	}
	return call, name, true
}

// bindSeries checks the arguments' types and gives the column its type.
func (sb *selectBinder) bindSeries(call *ast.FuncCallExpr, name string) (plan.Node, error) {
	b := &binder{stmt: sb.params, corr: sb.corr}
	if len(call.Args) < 2 || len(call.Args) > 3 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function generate_series with %d arguments does not exist", len(call.Args)).
			WithHint("Write generate_series(start, stop [, step]) over integers, numerics, or timestamps with an interval step.")
	}
	args := make([]expr.Expr, len(call.Args))
	for i, a := range call.Args {
		e, err := b.bindExpr(a, &scope{})
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	if args[0].Type() == types.Unknown && args[1].Type() == types.Unknown {
		return nil, sqlerr.New(sqlerr.AmbiguousFunction, "function generate_series(unknown, unknown) is not unique").
			WithHint("Cast the arguments, as in generate_series(1::int, 5).")
	}
	t := seriesType(args[0].Type(), args[1].Type())
	if t == types.Unknown {
		return nil, seriesSignatureError(args)
	}
	stepType := t
	if t.IsTime() {
		stepType = types.Interval
		if len(args) != 3 {
			return nil, seriesSignatureError(args)
		}
	}
	for i := range args {
		want := t
		if i == 2 {
			want = stepType
		}
		c, err := expr.Cast(args[i], want)
		if err != nil || c.Type() != want {
			return nil, seriesSignatureError(args)
		}
		args[i] = c
	}
	return &seriesNode{Args: args, Cols: []types.Column{{Name: name, Type: t}}}, nil
}

// seriesType is the type of a series from start and stop.
func seriesType(a, b types.Type) types.Type {
	if a == types.Unknown {
		a = b
	}
	if b == types.Unknown {
		b = a
	}
	switch {
	case (a.IsTime() || a == types.Date) && (b.IsTime() || b == types.Date):
		// PostgreSQL reads a date as timestamptz here (its preferred
		// time type).
		if a == types.Timestamp && b == types.Timestamp {
			return types.Timestamp
		}
		return types.Timestamptz
	case a.IsInteger() && b.IsInteger():
		if a == types.Int8 || b == types.Int8 {
			return types.Int8
		}
		return types.Int4
	case a.IsNumeric() && b.IsNumeric():
		return types.Numeric
	}
	return types.Unknown
}

func seriesSignatureError(args []expr.Expr) error {
	ts := ""
	for i, a := range args {
		if i > 0 {
			ts += ", "
		}
		ts += a.Type().String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function generate_series(%s) does not exist", ts).
		WithHint("Write generate_series(start, stop [, step]) over integers, numerics, or timestamps with an interval step.")
}

// runSeries generates the series' rows.
func runSeries(s *seriesNode) ([]types.Row, error) {
	if s.Unnest {
		return runUnnest(s)
	}
	vals := make([]types.Datum, len(s.Args))
	for i, a := range s.Args {
		v, err := a.Eval(nil)
		if err != nil {
			return nil, err
		}
		if v.IsNull() {
			return nil, nil
		}
		vals[i] = v
	}
	t := s.Cols[0].Type
	var step expr.Expr = &expr.Const{D: types.NewInt(1), T: types.Int4}
	if t == types.Numeric {
		d, _ := types.ParseText("1", types.Numeric)
		step = &expr.Const{D: d, T: types.Numeric}
	}
	if len(vals) == 3 {
		step = &expr.Const{D: vals[2], T: s.Args[2].Type()}
	}
	sv, _ := step.Eval(nil)
	var zero types.Datum
	switch step.Type() {
	case types.Interval:
		zero = types.NewInterval(0, 0, 0)
	case types.Numeric:
		zero, _ = types.ParseText("0", types.Numeric)
	default:
		zero = types.NewInt(0)
	}
	dir := types.Compare(sv, zero)
	if dir == 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	cur, stop := vals[0], vals[1]
	var rows []types.Row
	for {
		c := types.Compare(cur, stop)
		if (dir > 0 && c > 0) || (dir < 0 && c < 0) {
			return rows, nil
		}
		if len(rows) >= maxSeriesRows {
			return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "generate_series would return more than %d rows", maxSeriesRows).
				WithHint("Narrow the range or take a larger step.")
		}
		rows = append(rows, types.Row{cur})
		next, err := expr.Binary("+", &expr.Const{D: cur, T: t}, step)
		if err != nil {
			return nil, err
		}
		if next, err = expr.Cast(next, t); err != nil {
			return nil, err
		}
		nv, err := next.Eval(nil)
		if err != nil {
			// Past the type's range: the series ends, as in PostgreSQL.
			return rows, nil
		}
		cur = nv
	}
}

// materializeSeries replaces each generate_series in n by its rows.
func materializeSeries(n plan.Node) (plan.Node, error) {
	return mapPlanNodes(n, nil, func(x plan.Node) (plan.Node, bool, error) {
		s, ok := x.(*seriesNode)
		if !ok {
			return x, false, nil
		}
		rows, err := runSeries(s)
		if err != nil {
			return nil, true, err
		}
		return valuesOf(rows, s.Cols), true, nil
	})
}
