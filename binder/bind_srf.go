package binder

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Set-returning functions (generate_series, unnest, regexp_matches,
// regexp_split_to_table) in ad-hoc queries. Wherever they appear they are
// one plan node, SRFNode: a list of calls run side by side ("in
// lockstep"), the shorter ones padded with NULLs, optionally numbered
// (WITH ORDINALITY). In FROM that is f(...), ROWS FROM (f(...), g(...))
// and unnest(a, b) (bind_srf_from.go); in a select list the calls of the
// list are one SRFNode joined laterally to each input row
// (bind_srf_select.go), which is PostgreSQL's rule for several SRFs in one
// select list. Arguments are evaluated when the query runs (they may be
// parameters, or a LATERAL reference bound per outer row).

// SRFCall is one set-returning function call: rows gives its values for
// the arguments' values.
type SRFCall struct {
	Name string
	// Func, when set, is the function the user called, where Name is one
	// of its output columns (jsonb_each's key and value); for messages.
	Func string
	Args []expr.Expr
	T    types.Type
	rows func(args []types.Datum) ([]types.Datum, error)
	// each, when set, hands the values to emit one at a time instead
	// (generate_series), so that a long series is not held.
	each func(args []types.Datum, emit func(types.Datum) error) error
}

// SRFNode gives the rows of its calls side by side, as many as the longest
// call gives, then the row number when Ordinality is set. Cols has one
// column per call, then the ordinality column.
type SRFNode struct {
	Calls      []SRFCall
	Ordinality bool
	Cols       []types.Column
}

func (s *SRFNode) Schema() []types.Column { return s.Cols }
func (s *SRFNode) Children() []plan.Node  { return nil }
func (s *SRFNode) Describe() string {
	calls := make([]string, len(s.Calls))
	for i, c := range s.Calls {
		args := make([]string, len(c.Args))
		for j, a := range c.Args {
			args[j] = a.String()
		}
		calls[i] = c.Name + "(" + strings.Join(args, ", ") + ")"
	}
	d := "FunctionScan " + strings.Join(calls, ", ")
	if len(s.Calls) > 1 {
		d = "FunctionScan ROWS FROM (" + strings.Join(calls, ", ") + ")"
	}
	if s.Ordinality {
		d += " WITH ORDINALITY"
	}
	return d
}

// bindSRFCall binds a call of set-returning function name whose arguments
// are bound by b in scope sc.
func bindSRFCall(b *binder, call *ast.FuncCallExpr, sc *scope) (SRFCall, error) {
	name := call.FnName.L
	args := make([]expr.Expr, len(call.Args))
	for i, a := range call.Args {
		e, err := b.bindExpr(a, sc)
		if err != nil {
			return SRFCall{}, err
		}
		args[i] = e
	}
	switch name {
	case "generate_series":
		return bindSeries(args)
	case "generate_subscripts":
		return bindSubscripts(args)
	case "unnest":
		if len(call.Args) != 1 {
			return SRFCall{}, noSuchFunction("unnest", args, "unnest(array); unnest(a, b, ...) is allowed in FROM only.")
		}
		return bindUnnest(args[0])
	}
	rows, bound, t, ok, err := expr.RegexpRows(name, args)
	if err != nil {
		return SRFCall{}, err
	}
	if !ok {
		if rows, bound, t, ok, err = expr.JSONRows(name, args); err != nil {
			return SRFCall{}, err
		}
	}
	if !ok {
		// In a select list; FROM binds these as two columns.
		if rows, bound, t, ok, err = expr.JSONEachRecords(name, args); err != nil {
			return SRFCall{}, err
		}
	}
	if !ok {
		return SRFCall{}, sqlerr.New(sqlerr.UndefinedFunction, "function %s is not a set-returning function", name)
	}
	return SRFCall{Name: name, Args: bound, T: t, rows: rows}, nil
}

// runSRF gives the rows of s, its arguments evaluated over no row (they
// are constants once parameters and outer references are bound).
func runSRF(s *SRFNode) ([]types.Row, error) {
	results := make([][]types.Datum, len(s.Calls))
	n := 0
	for i, c := range s.Calls {
		vals := make([]types.Datum, len(c.Args))
		for j, a := range c.Args {
			v, err := a.Eval(nil)
			if err != nil {
				return nil, err
			}
			vals[j] = v
		}
		r, err := c.rows(vals)
		if err != nil {
			return nil, err
		}
		results[i] = r
		n = max(n, len(r))
	}
	rows := make([]types.Row, n)
	for k := range rows {
		row := make(types.Row, 0, len(s.Cols))
		for _, r := range results {
			if k < len(r) {
				row = append(row, r[k])
			} else {
				row = append(row, types.Null)
			}
		}
		if s.Ordinality {
			row = append(row, types.NewInt(int64(k+1)))
		}
		rows[k] = row
	}
	return rows, nil
}

// srfRows is an SRFNode whose arguments are bound: it makes its rows as
// the query reads them (exec.RowSource).
type srfRows struct{ *SRFNode }

// EachRow hands the rows of s to emit. One call with a generator of its
// own (each) is run value by value; other calls give all their values
// first (runSRF).
func (s srfRows) EachRow(ctx context.Context, emit func(types.Row) error) error {
	if len(s.Calls) != 1 || s.Calls[0].each == nil {
		rows, err := runSRF(s.SRFNode)
		if err != nil {
			return err
		}
		for _, row := range rows {
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	}
	c := s.Calls[0]
	vals := make([]types.Datum, len(c.Args))
	for j, a := range c.Args {
		v, err := a.Eval(nil)
		if err != nil {
			return err
		}
		vals[j] = v
	}
	k := int64(0)
	return c.each(vals, func(d types.Datum) error {
		if k++; k%4096 == 0 && ctx.Err() != nil {
			return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
		}
		row := make(types.Row, 1, len(s.Cols))
		row[0] = d
		if s.Ordinality {
			row = append(row, types.NewInt(k))
		}
		return emit(row)
	})
}

// MaterializeSRF replaces each SRFNode in n by an srfRows, which makes
// its rows as they are read. The right side of a lateral join is left
// alone: its outer references are bound, and it is run, per outer row
// (sql/lateral_run.go).
func MaterializeSRF(n plan.Node) (plan.Node, error) {
	return MapPlanNodes(n, nil, func(x plan.Node) (plan.Node, bool, error) {
		switch x := x.(type) {
		case *SRFNode:
			return srfRows{x}, true, nil
		case *LateralJoin:
			l := *x
			left, err := MaterializeSRF(x.Left)
			l.Left = left
			return &l, true, err
		}
		return x, false, nil
	})
}

// srfRefusal is the error for a set-returning function where PostgreSQL
// does not allow one.
func srfRefusal(where string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "set-returning functions are not allowed in %s", where).
		WithHint("You might be able to move the set-returning function into a LATERAL FROM item.")
}

// viewSRFError is a materialized view's refusal of set-returning functions.
func viewSRFError(s *SRFNode) error {
	name := s.Calls[0].Name
	if f := s.Calls[0].Func; f != "" {
		name = f
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in a materialized view", name).
		WithHint("Query it ad hoc, or keep the rows in a table and join it.")
}
