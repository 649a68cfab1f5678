// Package expr holds bound scalar expressions: trees whose column
// references are resolved to input positions and whose types are known.
// The binder (package sql) builds them; operators evaluate them per row.
package expr

import (
	"fmt"
	"strings"

	"streamdb/types"
)

// Expr is a bound scalar expression.
type Expr interface {
	// Type is the SQL type of the result.
	Type() types.Type
	// Eval computes the value for one input row.
	Eval(row types.Row) (types.Datum, error)
	// String renders the expression for EXPLAIN and error messages.
	String() string
}

// ColRef reads input column Idx.
type ColRef struct {
	Idx  int
	Name string
	T    types.Type
}

func (c *ColRef) Type() types.Type                        { return c.T }
func (c *ColRef) Eval(row types.Row) (types.Datum, error) { return row[c.Idx], nil }
func (c *ColRef) String() string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("$%d", c.Idx)
}

// Const is a literal value.
type Const struct {
	D types.Datum
	T types.Type
	// Mod is the modifier of a cast the constant was folded from.
	Mod types.Modifier
}

func (c *Const) Type() types.Type                    { return c.T }
func (c *Const) Eval(types.Row) (types.Datum, error) { return c.D, nil }
func (c *Const) String() string {
	if c.D.IsNull() {
		return "NULL"
	}
	if c.T.IsString() || c.T == types.Unknown {
		return "'" + strings.ReplaceAll(c.D.S, "'", "''") + "'"
	}
	return types.FormatText(c.D, c.T)
}

// Param is the query parameter $N+1; Bind replaces it by its value before
// execution.
type Param struct {
	N int
	T types.Type
}

func (p *Param) Type() types.Type { return p.T }
func (p *Param) Eval(types.Row) (types.Datum, error) {
	return types.Null, fmt.Errorf("parameter $%d has no value", p.N+1)
}
func (p *Param) String() string { return fmt.Sprintf("$%d", p.N+1) }

// Func is a call of a scalar function or operator, evaluated by Fn over the
// values of Args.
type Func struct {
	Name string
	Args []Expr
	T    types.Type
	// Fn computes the result from the evaluated arguments.
	Fn func(args []types.Datum) (types.Datum, error)
	// Fn2, when set, is Fn for a call of two arguments taken by value:
	// Eval uses it for comparisons and arithmetic, whose argument slice
	// would otherwise escape to the heap on every row (Fn is called
	// through a func value, so the compiler cannot keep it on the stack).
	Fn2 func(a, b types.Datum) (types.Datum, error)
	// Fn1 is the same for one argument (casts).
	Fn1 func(a types.Datum) (types.Datum, error)
	// Lazy functions (AND, OR, CASE, COALESCE) evaluate their own
	// arguments, which they receive as the node's Args.
	Lazy func(args []Expr, row types.Row) (types.Datum, error)
	// Infix renders the call as "a op b" in String.
	Infix bool
	// Mod is the modifier of the type a cast fits its values to.
	Mod types.Modifier
	// ints, when set, is Fn2 over the int64 values of two integer
	// arguments that are not NULL (integer arithmetic): Eval then reads
	// only those of column and constant arguments, not whole datums.
	ints func(a, b int64) (types.Datum, error)
}

func (f *Func) Type() types.Type { return f.T }

func (f *Func) Eval(row types.Row) (types.Datum, error) {
	if f.Lazy != nil {
		return f.Lazy(f.Args, row)
	}
	if f.ints != nil && len(f.Args) == 2 {
		a, aNull, err := intArg(f.Args[0], row)
		if err != nil {
			return types.Null, err
		}
		b, bNull, err := intArg(f.Args[1], row)
		if err != nil || aNull || bNull {
			return types.Null, err
		}
		return f.ints(a, b)
	}
	if f.Fn2 != nil && len(f.Args) == 2 {
		a, err := evalArg(f.Args[0], row)
		if err != nil {
			return types.Null, err
		}
		b, err := evalArg(f.Args[1], row)
		if err != nil {
			return types.Null, err
		}
		return f.Fn2(a, b)
	}
	if f.Fn1 != nil && len(f.Args) == 1 {
		a, err := evalArg(f.Args[0], row)
		if err != nil {
			return types.Null, err
		}
		return f.Fn1(a)
	}
	var buf [4]types.Datum
	args := buf[:0]
	for _, a := range f.Args {
		v, err := a.Eval(row)
		if err != nil {
			return types.Null, err
		}
		args = append(args, v)
	}
	return f.Fn(args)
}

// evalArg is a.Eval(row), reading column references and constants (most
// arguments) without a call through the interface.
func evalArg(a Expr, row types.Row) (types.Datum, error) {
	switch x := a.(type) {
	case *ColRef:
		return row[x.Idx], nil
	case *Const:
		return x.D, nil
	}
	return a.Eval(row)
}

// intArg is the value of an integer argument, and whether it is NULL.
func intArg(a Expr, row types.Row) (int64, bool, error) {
	var d *types.Datum
	switch x := a.(type) {
	case *ColRef:
		d = &row[x.Idx]
	case *Const:
		d = &x.D
	default:
		v, err := a.Eval(row)
		return v.I, v.IsNull(), err
	}
	return d.I, d.IsNull(), nil
}

func (f *Func) String() string {
	parts := make([]string, len(f.Args))
	for i, a := range f.Args {
		parts[i] = a.String()
	}
	if f.Infix && len(parts) == 2 {
		return "(" + parts[0] + " " + f.Name + " " + parts[1] + ")"
	}
	if f.Infix && len(parts) == 1 {
		return "(" + f.Name + " " + parts[0] + ")"
	}
	return f.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Walk calls fn on e and every sub-expression, parents first; fn returns a
// replacement (or the node itself). It returns the rewritten tree.
func Walk(e Expr, fn func(Expr) Expr) Expr {
	e = fn(e)
	if f, ok := e.(*Func); ok {
		for i, a := range f.Args {
			f.Args[i] = Walk(a, fn)
		}
	}
	return e
}

// Visit calls fn on e and every sub-expression, parents first, and
// changes nothing. (Walk stores every result back into its parent, even
// an unchanged one: a write that plans shared between sessions must not
// see.)
func Visit(e Expr, fn func(Expr)) {
	fn(e)
	if f, ok := e.(*Func); ok {
		for _, a := range f.Args {
			Visit(a, fn)
		}
	}
}

// BindParams returns a copy of e with every Param replaced by its value.
func BindParams(e Expr, params []types.Datum) (Expr, error) {
	var err error
	out := Clone(e)
	out = Walk(out, func(x Expr) Expr {
		if p, ok := x.(*Param); ok {
			if p.N >= len(params) {
				err = fmt.Errorf("no value for parameter $%d", p.N+1)
				return x
			}
			return &Const{D: params[p.N], T: p.T}
		}
		return x
	})
	return out, err
}

// Clone deep-copies the function nodes of e (leaves are immutable).
func Clone(e Expr) Expr {
	f, ok := e.(*Func)
	if !ok {
		return e
	}
	c := *f
	c.Args = make([]Expr, len(f.Args))
	for i, a := range f.Args {
		c.Args[i] = Clone(a)
	}
	return &c
}

// HasParams reports whether e contains a Param.
func HasParams(e Expr) bool {
	found := false
	Visit(e, func(x Expr) {
		if _, ok := x.(*Param); ok {
			found = true
		}
	})
	return found
}

// Holds reports whether cond is true for row (a nil cond always holds);
// NULL counts as false, as in WHERE and ON.
func Holds(cond Expr, row types.Row) (bool, error) {
	if cond == nil {
		return true, nil
	}
	v, err := cond.Eval(row)
	if err != nil {
		return false, err
	}
	return !v.IsNull() && v.Bool(), nil
}

// IsConstant reports whether e refers to no column and no parameter, so
// that it evaluates to the same value for every row.
func IsConstant(e Expr) bool {
	constant := true
	Visit(e, func(x Expr) {
		switch x.(type) {
		case *ColRef, *Param:
			constant = false
		}
	})
	return constant
}
