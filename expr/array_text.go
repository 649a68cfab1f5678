package expr

import (
	"strconv"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// One-dimensional arrays, as the catalog queries of drivers and tools use
// them: ARRAY[...], x[i], x = ANY (arr), current_schemas(bool),
// array_upper/array_lower/array_length/cardinality, array_to_string and
// string_to_array. An array value is carried as its PostgreSQL text form
// ('{pg_catalog,public}', elements quoted as array_out quotes them) and
// typed text, so it travels through every operator and the wire like a
// string; clients read it as text, not as a decoded array. Subscripts
// start at 1; an index outside the array gives NULL, as in PostgreSQL.

// arrayFunc builds the array functions; ok is false for other names.
func arrayFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	mk := func(t types.Type, args []Expr, fn func([]types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return &Func{Name: name, Args: args, T: t, Fn: strict(fn)}, true, nil
	}
	n := len(args)
	switch name {
	case ArrayFunc:
		a := make([]Expr, n)
		for i, x := range args {
			if a[i], err = Cast(x, types.Text); err != nil {
				return nil, true, err
			}
		}
		// Not strict: NULL elements are kept.
		return &Func{Name: "array", Args: a, T: types.Text, Fn: func(v []types.Datum) (types.Datum, error) {
			return types.NewString(FormatTextArray(v)), nil
		}}, true, nil
	case SubscriptFunc:
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text, types.Int8)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			elems, err := parseTextArray(v[0].S)
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
	case "cardinality":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Int4, a, func(v []types.Datum) (types.Datum, error) {
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
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
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
	return nil, false, nil
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

// formatTextArray is array_out of one-dimensional text elements.
// FormatTextArray is the text form of an array of text elements (NULLs
// kept), quoted as PostgreSQL's array_out quotes them.
func FormatTextArray(elems []types.Datum) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case e.IsNull():
			b.WriteString("NULL")
		case needsArrayQuotes(e.S):
			b.WriteByte('"')
			for _, c := range e.S {
				if c == '"' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteRune(c)
			}
			b.WriteByte('"')
		default:
			b.WriteString(e.S)
		}
	}
	b.WriteByte('}')
	return b.String()
}

func needsArrayQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "null") {
		return true
	}
	return strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f")
}

// parseTextArray reads a one-dimensional array in PostgreSQL's text form;
// an int2vector's form ("1 2") is read too.
func parseTextArray(s string) ([]types.Datum, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		var out []types.Datum
		for _, f := range strings.Fields(s) {
			if _, err := strconv.ParseInt(f, 10, 64); err != nil {
				return nil, malformedArray(s)
			}
			out = append(out, types.NewString(f))
		}
		return out, nil
	}
	if !strings.HasSuffix(s, "}") {
		return nil, malformedArray(s)
	}
	body := s[1 : len(s)-1]
	var out []types.Datum
	if strings.TrimSpace(body) == "" {
		return out, nil
	}
	for i := 0; i <= len(body); {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var b strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for ; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				b.WriteByte(body[i])
			}
			if i >= len(body) {
				return nil, malformedArray(s)
			}
			i++
		} else {
			for ; i < len(body) && body[i] != ','; i++ {
				if body[i] == '{' || body[i] == '}' || body[i] == '"' {
					return nil, malformedArray(s)
				}
				b.WriteByte(body[i])
			}
		}
		v := b.String()
		if !quoted {
			v = strings.TrimSpace(v)
		}
		if !quoted && strings.EqualFold(v, "null") {
			out = append(out, types.Null)
		} else {
			out = append(out, types.NewString(v))
		}
		for i < len(body) && body[i] == ' ' {
			i++
		}
		if i < len(body) && body[i] != ',' {
			return nil, malformedArray(s)
		}
		i++
	}
	return out, nil
}

func malformedArray(s string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s).
		WithHint("Write a one-dimensional array as '{a,b}' or ARRAY[a, b]; streamdb has no multi-dimensional arrays.")
}
