package expr

import (
	"fmt"

	"streamdb/sqlerr"
	"streamdb/types"
)

// PostgreSQL's array functions and operators over typed arrays: ||,
// @> (arraycontains), <@ (arraycontained), && (arrayoverlap),
// array_append, array_prepend, array_cat, array_remove, array_replace,
// array_position(s), array_ndims, array_dims and array_fill. Element
// equality is the element type's (types.Compare); searches and removals
// treat NULL as equal to NULL, as PostgreSQL's do, containment never
// matches a NULL element.

// typedArrayFunc builds these functions; ok is false for other names.
func typedArrayFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	n := len(args)
	arity := map[string][2]int{
		"arraycontains": {2, 2}, "arraycontained": {2, 2}, "arrayoverlap": {2, 2},
		"array_append": {2, 2}, "array_prepend": {2, 2}, "array_cat": {2, 2},
		"array_remove": {2, 2}, "array_replace": {3, 3}, "array_position": {2, 3},
		"array_positions": {2, 2}, "array_ndims": {1, 1}, "array_dims": {1, 1}, "array_fill": {2, 3},
	}[name]
	if arity[0] == 0 {
		return nil, false, nil
	}
	if n < arity[0] || n > arity[1] {
		return nil, true, wrongArgs(name, args)
	}
	switch name {
	case "arraycontains", "arraycontained", "arrayoverlap":
		e, err = containment(name, args[0], args[1])
	case "array_cat":
		e, err = arrayCat(args[0], args[1])
	case "array_append":
		e, err = arrayAppend(name, args[0], args[1], false)
	case "array_prepend":
		e, err = arrayAppend(name, args[1], args[0], true)
	case "array_remove", "array_replace", "array_position", "array_positions":
		e, err = arraySearch(name, args)
	case "array_ndims", "array_dims":
		e, err = arrayDims(name, args[0])
	case "array_fill":
		e, err = arrayFill(args)
	}
	return e, true, err
}

// arrayConcat is || with an array operand: array || array (an untyped
// literal is an array) is array_cat, array || element array_append,
// element || array array_prepend.
func arrayConcat(l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	var f *Func
	var err error
	var e Expr
	switch {
	case lt.IsArray() && !rt.IsArray() && rt != types.Unknown:
		e, err = arrayAppend("||", l, r, false)
	case rt.IsArray() && !lt.IsArray() && lt != types.Unknown:
		e, err = arrayAppend("||", r, l, true)
	default:
		e, err = arrayCat(l, r)
	}
	if err != nil {
		return nil, err
	}
	f = e.(*Func)
	f.Name, f.Infix = "||", true
	return f, nil
}

func arrayCat(a, b Expr) (Expr, error) {
	a, b, err := sameArrays("array_cat", a, b, true)
	if err != nil {
		return nil, err
	}
	elem := a.Type().Elem()
	return &Func{Name: "array_cat", Args: []Expr{a, b}, T: a.Type(), Fn: func(v []types.Datum) (types.Datum, error) {
		switch {
		case v[0].IsNull():
			return v[1], nil
		case v[1].IsNull():
			return v[0], nil
		}
		x, y, err := arrayElemsPair(v[0], v[1], elem)
		if err != nil {
			return types.Null, err
		}
		return arrayValue(append(x, y...), elem), nil
	}}, nil
}

// arrayAppend is array_append(arr, x), or array_prepend(x, arr) when
// front; a NULL array is an empty one.
func arrayAppend(name string, arr, x Expr, front bool) (Expr, error) {
	arr, x, err := arrayAndElem(name, arr, x)
	if err != nil {
		return nil, err
	}
	elem := arr.Type().Elem()
	args := []Expr{arr, x}
	if front {
		args = []Expr{x, arr}
	}
	return &Func{Name: name, Args: args, T: arr.Type(), Fn: func(v []types.Datum) (types.Datum, error) {
		a, d := v[0], v[1]
		if front {
			a, d = v[1], v[0]
		}
		var elems []types.Datum
		if !a.IsNull() {
			var err error
			if elems, err = arrayElems(a, elem); err != nil {
				return types.Null, err
			}
		}
		if front {
			elems = append([]types.Datum{d}, elems...)
		} else {
			elems = append(elems, d)
		}
		return arrayValue(elems, elem), nil
	}}, nil
}

func containment(name string, a, b Expr) (Expr, error) {
	a, b, err := sameArrays(name, a, b, false)
	if err != nil {
		return nil, err
	}
	elem := a.Type().Elem()
	// contains reports whether every non-NULL element of sub is in super,
	// and sub has no NULL; overlap whether any element is in both.
	in := func(x types.Datum, set []types.Datum) bool {
		for _, y := range set {
			if !y.IsNull() && types.Compare(x, y) == 0 {
				return true
			}
		}
		return false
	}
	return &Func{Name: name, Args: []Expr{a, b}, T: types.Bool, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		x, y, err := arrayElemsPair(v[0], v[1], elem)
		if err != nil {
			return types.Null, err
		}
		if name == "arraycontained" {
			x, y = y, x
		}
		if name == "arrayoverlap" {
			for _, e := range y {
				if !e.IsNull() && in(e, x) {
					return types.NewBool(true), nil
				}
			}
			return types.NewBool(false), nil
		}
		for _, e := range y {
			if e.IsNull() || !in(e, x) {
				return types.NewBool(false), nil
			}
		}
		return types.NewBool(true), nil
	})}, nil
}

// arraySearch is array_remove(arr, x), array_replace(arr, x, y),
// array_position(arr, x [, start]) and array_positions(arr, x).
func arraySearch(name string, args []Expr) (Expr, error) {
	arr, x, err := arrayAndElem(name, args[0], args[1])
	if err != nil {
		return nil, err
	}
	elem := arr.Type().Elem()
	a := append([]Expr{arr, x}, args[2:]...)
	t := arr.Type()
	switch name {
	case "array_replace":
		if a[2], err = Cast(a[2], elem); err != nil {
			return nil, err
		}
	case "array_position":
		t = types.Int4
		if len(a) == 3 {
			if a[2], err = Cast(a[2], types.Int4); err != nil {
				return nil, err
			}
		}
	case "array_positions":
		t = types.ArrayOf(types.Int4)
	}
	same := func(a, b types.Datum) bool {
		if a.IsNull() || b.IsNull() {
			return a.IsNull() && b.IsNull()
		}
		return types.Compare(a, b) == 0
	}
	return &Func{Name: name, Args: a, T: t, Fn: func(v []types.Datum) (types.Datum, error) {
		if v[0].IsNull() {
			return types.Null, nil
		}
		elems, err := arrayElems(v[0], elem)
		if err != nil {
			return types.Null, err
		}
		switch name {
		case "array_remove":
			kept := elems[:0]
			for _, e := range elems {
				if !same(e, v[1]) {
					kept = append(kept, e)
				}
			}
			return arrayValue(kept, elem), nil
		case "array_replace":
			for i, e := range elems {
				if same(e, v[1]) {
					elems[i] = v[2]
				}
			}
			return arrayValue(elems, elem), nil
		case "array_positions":
			var at []types.Datum
			for i, e := range elems {
				if same(e, v[1]) {
					at = append(at, types.NewInt(int64(i+1)))
				}
			}
			return arrayValue(at, types.Int4), nil
		}
		start := 1
		if len(elems) == 0 {
			return types.Null, nil // before the start is checked, as in PostgreSQL
		}
		if len(v) == 3 {
			if v[2].IsNull() {
				return types.Null, sqlerr.New(sqlerr.NullValueNotAllowed, "initial position must not be null")
			}
			start = int(v[2].I)
		}
		for i := max(start, 1); i <= len(elems); i++ {
			if same(elems[i-1], v[1]) {
				return types.NewInt(int64(i)), nil
			}
		}
		return types.Null, nil
	}}, nil
}

// arrayDims is array_ndims and array_dims: NULL for an empty array.
func arrayDims(name string, arr Expr) (Expr, error) {
	arr, err := toArray(name, arr, types.Unknown)
	if err != nil {
		return nil, err
	}
	t := types.Int4
	if name == "array_dims" {
		t = types.Text
	}
	return &Func{Name: name, Args: []Expr{arr}, T: t, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		elems, err := parseTextArray(v[0].S)
		if err != nil || len(elems) == 0 {
			return types.Null, err
		}
		if name == "array_ndims" {
			return types.NewInt(1), nil
		}
		return types.NewString(fmt.Sprintf("[1:%d]", len(elems))), nil
	})}, nil
}

// arrayFill is array_fill(value, dims [, lower bounds]) for one dimension
// with lower bound 1.
func arrayFill(args []Expr) (Expr, error) {
	elem := args[0].Type()
	if elem == types.Unknown {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
	}
	a := []Expr{args[0]}
	for _, d := range args[1:] {
		c, err := Cast(d, types.ArrayOf(types.Int4))
		if err != nil {
			return nil, err
		}
		a = append(a, c)
	}
	return &Func{Name: "array_fill", Args: a, T: types.ArrayOf(elem), Fn: func(v []types.Datum) (types.Datum, error) {
		for _, d := range v[1:] {
			if d.IsNull() {
				return types.Null, sqlerr.New(sqlerr.NullValueNotAllowed, "dimension array or low bound array cannot be null")
			}
		}
		dims, err := arrayElems(v[1], types.Int4)
		if err != nil {
			return types.Null, err
		}
		if len(v) == 3 {
			lb, err := arrayElems(v[2], types.Int4)
			if err != nil {
				return types.Null, err
			}
			if len(lb) != len(dims) {
				e := sqlerr.New(sqlerr.ArraySubscriptError, "wrong number of array subscripts")
				e.Detail = "Low bound array has different size than dimensions array."
				return types.Null, e
			}
			if len(lb) == 1 && (lb[0].IsNull() || lb[0].I != 1) {
				return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "array lower bounds other than 1 are not supported")
			}
		}
		switch {
		case len(dims) == 0:
			return types.NewString("{}"), nil
		case len(dims) > 1:
			return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported").
				WithHint("streamdb's arrays have one dimension.")
		case dims[0].IsNull():
			return types.Null, sqlerr.New(sqlerr.NullValueNotAllowed, "dimension values cannot be null")
		case dims[0].I < 0:
			return types.NewString("{}"), nil
		case dims[0].I > 1<<20:
			return types.Null, sqlerr.New(sqlerr.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", 1<<20)
		}
		elems := make([]types.Datum, dims[0].I)
		for i := range elems {
			elems[i] = v[0]
		}
		return arrayValue(elems, elem), nil
	}}, nil
}
