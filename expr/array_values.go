package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// Typed arrays (types.ArrayOf): values are their canonical text form (see
// package types), read into element datums where an operator needs the
// elements. This file has the conversions and the type resolution that
// the array operators and functions share.

// arrayElems reads the array value d, of element type elem, into element
// datums of that type (NULL elements as NULL).
func arrayElems(d types.Datum, elem types.Type) ([]types.Datum, error) {
	parts, err := parseTextArray(d.S)
	if err != nil {
		return nil, err
	}
	for i, p := range parts {
		if !p.IsNull() {
			if parts[i], err = types.ParseText(p.S, elem); err != nil {
				return nil, err
			}
		}
	}
	return parts, nil
}

// arrayElemsPair is arrayElems of two arrays of one element type.
func arrayElemsPair(a, b types.Datum, elem types.Type) ([]types.Datum, []types.Datum, error) {
	x, err := arrayElems(a, elem)
	if err != nil {
		return nil, nil, err
	}
	y, err := arrayElems(b, elem)
	return x, y, err
}

// arrayValue is the array of element datums elems, of type elem.
func arrayValue(elems []types.Datum, elem types.Type) types.Datum {
	parts := make([]types.Datum, len(elems))
	for i, e := range elems {
		if !e.IsNull() {
			parts[i] = types.NewString(types.FormatText(e, elem))
		}
	}
	return types.NewString(types.FormatArray(parts))
}

// arrayElemType is the element type of an array argument: that of an
// array type, text for text (the catalog's arrays, carried as text).
func arrayElemType(t types.Type) types.Type {
	if t.IsArray() {
		return t.Elem()
	}
	return types.Text
}

// toArray resolves an argument that must be an array: an array stays as
// it is, an untyped literal or parameter becomes an array of elem (text[]
// when elem is unknown too), text is read as text[]. Other types are
// refused as PostgreSQL refuses them for an anyarray argument.
func toArray(fn string, e Expr, elem types.Type) (Expr, error) {
	t := e.Type()
	switch {
	case t.IsArray():
		return e, nil
	case t == types.Unknown:
		if elem == types.Unknown || elem.IsArray() {
			elem = types.Text
		}
		return Cast(e, types.ArrayOf(elem))
	case t.IsString():
		return Cast(e, types.ArrayOf(types.Text))
	}
	return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", fn, t).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// sameArrays resolves two array arguments to one array type, as
// PostgreSQL resolves anyarray arguments: an untyped literal takes the
// other's type; int[] and bigint[] are refused, as for the comparisons
// and @>, unless compatible (anycompatiblearray, as for array_cat),
// where they meet at bigint[].
func sameArrays(fn string, a, b Expr, compatible bool) (Expr, Expr, error) {
	at, bt := a.Type(), b.Type()
	var err error
	switch {
	case at == types.Unknown && bt == types.Unknown:
		at, bt = types.ArrayOf(types.Text), types.ArrayOf(types.Text)
	case at == types.Unknown:
		at = bt
	case bt == types.Unknown:
		bt = at
	}
	if a, err = toArray(fn, a, at.Elem()); err != nil {
		return nil, nil, err
	}
	if b, err = toArray(fn, b, bt.Elem()); err != nil {
		return nil, nil, err
	}
	at, bt = a.Type(), b.Type()
	if at == bt {
		return a, b, nil
	}
	elem, err := CommonType([]types.Type{at.Elem(), bt.Elem()})
	if err != nil || !compatible {
		return nil, nil, arrayArgsError(fn, at, bt)
	}
	if a, err = Cast(a, types.ArrayOf(elem)); err != nil {
		return nil, nil, err
	}
	b, err = Cast(b, types.ArrayOf(elem))
	return a, b, err
}

// arrayAndElem resolves an (anycompatiblearray, anycompatible) pair of
// arguments: the array's element type and the element's meet at their
// common type (an untyped element takes the array's element type, an
// untyped array the element's type); types with none are refused.
func arrayAndElem(fn string, arr, elem Expr) (Expr, Expr, error) {
	arr, err := toArray(fn, arr, elem.Type())
	if err != nil {
		return nil, nil, err
	}
	at := arr.Type()
	common, err := CommonType([]types.Type{at.Elem(), elem.Type()})
	if err != nil {
		return nil, nil, arrayArgsError(fn, at, elem.Type())
	}
	if arr, err = Cast(arr, types.ArrayOf(common)); err != nil {
		return nil, nil, err
	}
	elem, err = Cast(elem, common)
	return arr, elem, err
}

// arrayArgsError refuses an operator's or a function's argument types.
func arrayArgsError(fn string, a, b types.Type) error {
	if op, ok := arrayOperators[fn]; ok {
		fn = op
	}
	if fn != "" && (fn[0] < 'a' || fn[0] > 'z') {
		return opTypeError(fn, a, b)
	}
	return wrongArgs(fn, []Expr{&Const{T: a}, &Const{T: b}})
}

// castArray converts an array element by element (int[] to text[],
// numeric[] to int[]), with the element types' casts.
func castArray(d types.Datum, src, t types.Type) (types.Datum, error) {
	elems, err := arrayElems(d, src.Elem())
	if err != nil {
		return types.Null, err
	}
	for i, e := range elems {
		if elems[i], err = castFrom(e, src.Elem(), t.Elem()); err != nil {
			return types.Null, err
		}
	}
	return arrayValue(elems, t.Elem()), nil
}

// ArrayValues reads the array value d of array type t into element datums
// (NULL elements as NULL), for callers that order arrays (CompareArrays).
func ArrayValues(d types.Datum, t types.Type) ([]types.Datum, error) {
	return arrayElems(d, t.Elem())
}

// CompareArrays orders arrays read by ArrayValues as PostgreSQL does.
func CompareArrays(a, b []types.Datum) int { return compareArrays(a, b) }

// compareArrays orders arrays as PostgreSQL's btarraycmp: element by
// element, NULL elements equal to each other and above every value, then
// the shorter array first.
func compareArrays(a, b []types.Datum) int {
	for i := range min(len(a), len(b)) {
		if c := types.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// arrayCompare is compare (ops.go) for two arrays.
func arrayCompare(op string, l, r Expr, test func(int) bool) (Expr, error) {
	l, r, err := sameArrays(op, l, r, false)
	if err != nil {
		return nil, err
	}
	elem := l.Type().Elem()
	cmp := func(a, b types.Datum) (int, error) {
		ae, be, err := arrayElemsPair(a, b, elem)
		return compareArrays(ae, be), err
	}
	if op == "<=>" {
		return &Func{Name: "IS NOT DISTINCT FROM", Infix: true, Args: []Expr{l, r}, T: types.Bool,
			Fn: func(a []types.Datum) (types.Datum, error) {
				if a[0].IsNull() || a[1].IsNull() {
					return types.NewBool(a[0].IsNull() && a[1].IsNull()), nil
				}
				c, err := cmp(a[0], a[1])
				return types.NewBool(c == 0), err
			}}, nil
	}
	return binary(&Func{Name: op, Infix: true, Args: []Expr{l, r}, T: types.Bool},
		func(a, b types.Datum) (types.Datum, error) {
			if a.IsNull() || b.IsNull() {
				return types.Null, nil
			}
			c, err := cmp(a, b)
			return types.NewBool(test(c)), err
		}), nil
}

// arrayConstructor is ARRAY[a, b, ...]: the elements meet at their common
// type (text when all are untyped), NULLs kept.
func arrayConstructor(args []Expr) (Expr, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
		if ts[i].IsArray() {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported").
				WithHint("streamdb's arrays have one dimension.")
		}
	}
	elem, err := CommonType(ts)
	if err != nil {
		return nil, err
	}
	a := make([]Expr, len(args))
	for i, x := range args {
		if a[i], err = Cast(x, elem); err != nil {
			return nil, err
		}
	}
	return &Func{Name: "array", Args: a, T: types.ArrayOf(elem), Fn: func(v []types.Datum) (types.Datum, error) {
		return arrayValue(v, elem), nil
	}}, nil
}
