package expr

import (
	"strconv"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// One-dimensional arrays: ARRAY[...], x[i], x = ANY (arr),
// current_schemas(bool), array_upper/array_lower/array_length/cardinality,
// array_to_string and string_to_array. An array value is carried as its
// PostgreSQL text form ('{pg_catalog,public}', elements quoted as
// array_out quotes them), typed as an array type (int4[]) or, for the
// catalog's arrays, as text; both read as arrays here. Subscripts start at
// 1; an index outside the array gives NULL, as in PostgreSQL.

// arrayFunc builds the array functions; ok is false for other names.
func arrayFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	mk := func(t types.Type, args []Expr, fn func([]types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return &Func{Name: name, Args: args, T: t, Fn: strict(fn)}, true, nil
	}
	n := len(args)
	if fn, ok := arrayOperatorFuncs[name]; ok {
		name = fn
	}
	switch name {
	case ArrayFunc:
		e, err := arrayConstructor(args)
		return e, true, err
	case SubscriptFunc:
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		elem := arrayElemType(args[0].Type())
		a, err := castArgs(args, types.Text, types.Int8)
		if err != nil {
			return nil, true, err
		}
		if args[0].Type().IsArray() {
			a[0] = args[0]
		}
		return mk(elem, a, func(v []types.Datum) (types.Datum, error) {
			elems, err := arrayElems(v[0], elem)
			if err != nil {
				return types.Null, err
			}
			if i := v[1].I; i >= 1 && i <= int64(len(elems)) {
				return elems[i-1], nil
			}
			return types.Null, nil
		})
	case AnyFunc:
		return anyOverArray(args)
	case "current_schemas":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Bool)
		if err != nil {
			return nil, true, err
		}
		// The search path is public; pg_catalog is searched first
		// implicitly, which current_schemas(true) shows.
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			if v[0].Bool() {
				return types.NewString("{pg_catalog,public}"), nil
			}
			return types.NewString("{public}"), nil
		})
	case "array_upper", "array_lower", "array_length":
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text, types.Int8)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Int4, a, func(v []types.Datum) (types.Datum, error) {
			elems, err := parseTextArray(v[0].S)
			if err != nil || v[1].I != 1 || len(elems) == 0 {
				return types.Null, err
			}
			if name == "array_lower" {
				return types.NewInt(1), nil
			}
			return types.NewInt(int64(len(elems))), nil
		})
	case CardinalityFunc:
		if n != 1 {
			return nil, true, wrongArgs("cardinality", args)
		}
		a, err := toArray("cardinality", args[0], types.Unknown)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Int4, []Expr{a}, func(v []types.Datum) (types.Datum, error) {
			elems, err := parseTextArray(v[0].S)
			return types.NewInt(int64(len(elems))), err
		})
	case "array_to_string":
		if n != 2 && n != 3 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, []types.Type{types.Text, types.Text, types.Text}[:n]...)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			elems, err := parseTextArray(v[0].S)
			if err != nil {
				return types.Null, err
			}
			var parts []string
			for _, e := range elems {
				switch {
				case !e.IsNull():
					parts = append(parts, e.S)
				case len(v) == 3:
					parts = append(parts, v[2].S)
				}
			}
			return types.NewString(strings.Join(parts, v[1].S)), nil
		})
	case "string_to_array":
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text, types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(types.ArrayOf(types.Text), a, func(v []types.Datum) (types.Datum, error) {
			if v[0].S == "" {
				return types.NewString("{}"), nil
			}
			var parts []string
			if v[1].S == "" {
				parts = []string{v[0].S}
			} else {
				parts = strings.Split(v[0].S, v[1].S)
			}
			elems := make([]types.Datum, len(parts))
			for i, p := range parts {
				elems[i] = types.NewString(p)
			}
			return types.NewString(FormatTextArray(elems)), nil
		})
	}
	return typedArrayFunc(name, args)
}

// anyOverArray is x op ANY (arr) and x op ALL (arr): each element, read as
// a value of x's type, is compared with x; NULLs follow SQL's three-valued
// logic as in PostgreSQL.
func anyOverArray(args []Expr) (Expr, bool, error) {
	if len(args) != 4 {
		return nil, true, wrongArgs("ANY", args)
	}
	op, ok1 := args[1].(*Const)
	kind, ok2 := args[2].(*Const)
	if !ok1 || !ok2 {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "malformed ANY expression")
	}
	xt := args[0].Type()
	if xt == types.Unknown {
		xt = types.Text
	}
	elem, err := Cast(&ColRef{Idx: 1, Name: "element", T: types.Text}, xt)
	if err != nil {
		return nil, true, err
	}
	cmp, err := Binary(op.D.S, &ColRef{Idx: 0, Name: "x", T: xt}, elem)
	if err != nil {
		return nil, true, err
	}
	x, err := Cast(args[0], xt)
	if err != nil {
		return nil, true, err
	}
	if p, ok := args[3].(*Param); ok && p.T == types.Unknown {
		p.T = types.ArrayOf(xt) // = ANY ($1): the parameter is an array
	}
	arr, err := Cast(args[3], types.Text)
	if err != nil {
		return nil, true, err
	}
	all := kind.D.S == "all"
	return &Func{Name: op.D.S + " " + strings.ToUpper(kind.D.S), Args: []Expr{x, arr}, T: types.Bool,
		Fn: func(v []types.Datum) (types.Datum, error) {
			if v[1].IsNull() {
				return types.Null, nil
			}
			elems, err := parseTextArray(v[1].S)
			if err != nil {
				return types.Null, err
			}
			sawNull := false
			for _, e := range elems {
				r, err := cmp.Eval(types.Row{v[0], e})
				if err != nil {
					return types.Null, err
				}
				switch {
				case r.IsNull():
					sawNull = true
				case r.Bool() != all:
					return types.NewBool(!all), nil
				}
			}
			if sawNull {
				return types.Null, nil
			}
			return types.NewBool(all), nil
		}}, true, nil
}

// FormatTextArray is the text form of an array of text elements (NULLs
// kept), quoted as PostgreSQL's array_out quotes them.
func FormatTextArray(elems []types.Datum) string { return types.FormatArray(elems) }

// parseTextArray reads a one-dimensional array in PostgreSQL's text form;
// an int2vector's form ("1 2") is read too.
func parseTextArray(s string) ([]types.Datum, error) {
	if t := strings.TrimSpace(s); t != "" && t[0] != '{' {
		var out []types.Datum
		for _, f := range strings.Fields(t) {
			if _, err := strconv.ParseInt(f, 10, 64); err != nil {
				return types.SplitArray(s)
			}
			out = append(out, types.NewString(f))
		}
		return out, nil
	}
	return types.SplitArray(s)
}
