package expr

import (
	"fmt"

	"streamdb/sqlerr"
	"streamdb/types"
)

// OuterRef stands, inside a correlated subquery's plan, for a value of the
// outer query's current row: the N-th outer value of the Correlated call
// that holds the subquery. Before the subquery runs for one outer row, the
// engine puts the value in its place (BindOuter); OuterRef is constant
// over the subquery's own rows.
type OuterRef struct {
	N    int
	T    types.Type
	Name string // the outer column, for EXPLAIN
}

func (o *OuterRef) Type() types.Type { return o.T }
func (o *OuterRef) Eval(types.Row) (types.Datum, error) {
	return types.Null, fmt.Errorf("outer reference %s has no value", o.Name)
}
func (o *OuterRef) String() string { return "outer." + o.Name }

// CorrelatedFunc names the call that wraps a correlated subquery:
// Args[0] is the *Subquery and Args[1+N] is the outer value OuterRef N
// stands for, bound over the outer row. Being a Func, its outer values are
// visited, cloned and given parameters as any argument is.
const CorrelatedFunc = "correlated"

// Correlate wraps sub, whose plan refers to the outer values outer.
func Correlate(sub *Subquery, outer []Expr) *Func {
	return &Func{Name: CorrelatedFunc, T: sub.T, Args: append([]Expr{sub}, outer...),
		Fn: func([]types.Datum) (types.Datum, error) {
			return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "correlated subqueries are supported in queries (SELECT), not in this statement yet")
		}}
}

// SubqueryOf returns the subquery e stands for (a Subquery, or one wrapped
// by Correlate) and its outer values.
func SubqueryOf(e Expr) (*Subquery, []Expr, bool) {
	switch e := e.(type) {
	case *Subquery:
		return e, nil, true
	case *Func:
		if e.Name == CorrelatedFunc && len(e.Args) > 0 {
			if s, ok := e.Args[0].(*Subquery); ok {
				return s, e.Args[1:], true
			}
		}
	}
	return nil, nil, false
}

// BindOuter returns a copy of e with each OuterRef replaced by its value.
func BindOuter(e Expr, vals []types.Datum) Expr {
	if !hasOuter(e) {
		return e
	}
	return Walk(Clone(e), func(x Expr) Expr {
		if o, ok := x.(*OuterRef); ok && o.N < len(vals) {
			return &Const{D: vals[o.N], T: o.T}
		}
		return x
	})
}

func hasOuter(e Expr) bool {
	found := false
	Visit(e, func(x Expr) {
		if _, ok := x.(*OuterRef); ok {
			found = true
		}
	})
	return found
}
