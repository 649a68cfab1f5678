package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// SubqueryKind is how an expression uses a subquery's rows.
type SubqueryKind int

// The kinds of subquery expressions.
const (
	// SubqueryScalar is (SELECT x ...): its one value, NULL for no rows.
	SubqueryScalar SubqueryKind = iota
	// SubqueryExists is EXISTS (SELECT ...).
	SubqueryExists
	// SubqueryIn is the right side of x IN (SELECT y ...); it stands as
	// the second argument of a Func named InSubquery or NotInSubquery.
	SubqueryIn
)

// Names of the (infix) functions whose second argument is a SubqueryIn;
// an IN list is bound as comparisons, never as a Func of these names.
const (
	InSubquery    = "IN"
	NotInSubquery = "NOT IN"
)

// Subquery is a subquery inside an expression (one that refers to the
// outer query stands wrapped by Correlate). Before a query runs, the
// engine runs an uncorrelated Plan once and replaces the node by its
// result (Resolve*); a correlated one runs per distinct outer values. A Subquery left in place
// where nothing resolves it (a view's dataflow, a DML statement) refuses
// to evaluate with 0A000.
type Subquery struct {
	Kind SubqueryKind
	// Plan is the subquery's plan (a plan.Node; plan imports expr).
	Plan any
	T    types.Type
	// Text is the subquery's SQL, for EXPLAIN and to tell subqueries
	// apart by String.
	Text string
	// RowIn marks the aggregate a row [NOT] IN (SELECT ...) is bound to
	// (sql/bind_row.go), which runs ad hoc only.
	RowIn bool
}

func (s *Subquery) Type() types.Type { return s.T }

func (s *Subquery) Eval(types.Row) (types.Datum, error) {
	return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries are supported in queries (SELECT), not in this statement yet")
}

func (s *Subquery) String() string {
	text := "subquery"
	if s.Text != "" {
		text = s.Text
	}
	if s.Kind == SubqueryExists {
		return "EXISTS (" + text + ")"
	}
	return "(" + text + ")"
}

// ResolveScalar is the value of a scalar subquery that returned rows (of
// one column): NULL for none, the value for one; more than one is 21000,
// as in PostgreSQL.
func (s *Subquery) ResolveScalar(rows []types.Row) (Expr, error) {
	switch len(rows) {
	case 0:
		return &Const{D: types.Null, T: s.T}, nil
	case 1:
		return &Const{D: rows[0][0], T: s.T}, nil
	}
	return nil, sqlerr.New(sqlerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
}

// ResolveExists is EXISTS over rows.
func (s *Subquery) ResolveExists(rows []types.Row) Expr {
	return &Const{D: types.NewBool(len(rows) > 0), T: types.Bool}
}

// ResolveIn is left [NOT] IN (the first column of rows), with SQL's NULL
// rules: no rows gives false (true for NOT IN) even for a NULL left side.
func ResolveIn(left Expr, t types.Type, rows []types.Row, not bool) (Expr, error) {
	if len(rows) == 0 {
		return &Const{D: types.NewBool(not), T: types.Bool}, nil
	}
	list := make([]Expr, len(rows))
	for i, r := range rows {
		list[i] = &Const{D: r[0], T: t}
	}
	return In(left, list, not)
}
