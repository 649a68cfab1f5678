package expr

import (
	"math"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// jsonFunc builds the json and jsonb functions and the operators' calls
// from front; ok is false for other names.
func jsonFunc(name string, args []Expr) (Expr, bool, error) {
	n := len(args)
	if op, ok := jsonOperatorFuncs[name]; ok {
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		e, err := Binary(op, args[0], args[1])
		return e, true, err
	}
	if (name == ContainsFunc || name == ContainedFunc) && n == 2 &&
		(args[0].Type() == types.JSONB || args[1].Type() == types.JSONB) {
		op := map[string]string{ContainsFunc: "@>", ContainedFunc: "<@"}[name]
		e, err := Binary(op, args[0], args[1])
		return e, true, err
	}
	mk := func(t types.Type, a []Expr, fn func(v []types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return &Func{Name: name, Args: a, T: t, Fn: strict(fn)}, true, nil
	}
	// jsonArg casts argument i to jsonb (json for the json_ functions) and
	// refuses other types.
	jsonArg := func(a []Expr, i int, t types.Type) error {
		at := a[i].Type()
		if at == t {
			return nil
		}
		if at != types.Unknown {
			return wrongArgs(name, args)
		}
		c, err := Cast(a[i], t)
		a[i] = c
		return err
	}
	if e, ok, err := jsonPathFunc(name, args); ok {
		return e, true, err
	}
	parsed := types.JSONOf
	switch name {
	case RowToJSONFunc:
		if n < 1 {
			return nil, true, wrongArgs(name, args)
		}
		e, err := rowToJSONCall(args)
		return e, true, err
	case "to_jsonb", "to_json":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		t := args[0].Type()
		if name == "to_json" {
			return mk(types.JSON, args, func(v []types.Datum) (types.Datum, error) {
				s, err := datumToJSONText(v[0], t)
				return types.NewJSONText(s), err
			})
		}
		return mk(types.JSONB, args, func(v []types.Datum) (types.Datum, error) {
			j, err := DatumToJSON(v[0], t)
			if err != nil {
				return types.Null, err
			}
			return types.NewJSONB(j), nil
		})
	case "jsonb_build_object", "json_build_object":
		if n%2 != 0 {
			return nil, true, sqlerr.New(sqlerr.InvalidParameterValue, "argument list must have even number of elements").
				WithHint("The arguments of %s() must consist of alternating keys and values.", name)
		}
		ts := argTypes(args)
		isJSON := name == "json_build_object"
		t := types.JSONB
		if isJSON {
			t = types.JSON
		}
		return &Func{Name: name, Args: args, T: t, Fn: func(v []types.Datum) (types.Datum, error) {
			obj := &types.JSONValue{Kind: types.JSONObject}
			var sb strings.Builder
			sb.WriteByte('{')
			for i := 0; i < len(v); i += 2 {
				if v[i].IsNull() {
					return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "argument %d: key must not be null", i+1)
				}
				k, err := jsonKeyText(v[i], ts[i])
				if err != nil {
					return types.Null, err
				}
				if isJSON {
					if i > 0 {
						sb.WriteString(", ")
					}
					types.WriteJSONString(&sb, k)
					sb.WriteString(" : ")
					s, err := datumToJSONText(v[i+1], ts[i+1])
					if err != nil {
						return types.Null, err
					}
					sb.WriteString(s)
					continue
				}
				val, err := DatumToJSON(v[i+1], ts[i+1])
				if err != nil {
					return types.Null, err
				}
				obj.Keys = append(obj.Keys, k)
				obj.Vals = append(obj.Vals, val)
			}
			if isJSON {
				sb.WriteByte('}')
				return types.NewJSONText(sb.String()), nil
			}
			return types.NewJSONB(types.NormalizeJSON(obj)), nil
		}}, true, nil
	case "jsonb_build_array", "json_build_array":
		ts := argTypes(args)
		isJSON := name == "json_build_array"
		t := types.JSONB
		if isJSON {
			t = types.JSON
		}
		return &Func{Name: name, Args: args, T: t, Fn: func(v []types.Datum) (types.Datum, error) {
			if isJSON {
				parts := make([]string, len(v))
				for i, d := range v {
					s, err := datumToJSONText(d, ts[i])
					if err != nil {
						return types.Null, err
					}
					parts[i] = s
				}
				return types.NewJSONText("[" + strings.Join(parts, ", ") + "]"), nil
			}
			arr := &types.JSONValue{Kind: types.JSONArray}
			for i, d := range v {
				val, err := DatumToJSON(d, ts[i])
				if err != nil {
					return types.Null, err
				}
				arr.Elems = append(arr.Elems, val)
			}
			return types.NewJSONB(arr), nil
		}}, true, nil
	case "jsonb_typeof", "json_typeof":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		a := append([]Expr(nil), args...)
		if err := jsonArg(a, 0, jsonFuncType(name)); err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			j, err := parsed(v[0])
			if err != nil {
				return types.Null, err
			}
			return types.NewString(j.Kind.String()), nil
		})
	case "jsonb_array_length", "json_array_length":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		a := append([]Expr(nil), args...)
		if err := jsonArg(a, 0, jsonFuncType(name)); err != nil {
			return nil, true, err
		}
		return mk(types.Int4, a, func(v []types.Datum) (types.Datum, error) {
			j, err := parsed(v[0])
			if err != nil {
				return types.Null, err
			}
			switch j.Kind {
			case types.JSONArray:
				return types.NewInt(int64(len(j.Elems))), nil
			case types.JSONObject:
				return types.Null, jsonError("cannot get array length of a non-array")
			}
			return types.Null, jsonError("cannot get array length of a scalar")
		})
	case "jsonb_extract_path", "jsonb_extract_path_text", "json_extract_path", "json_extract_path_text":
		if n < 2 { // VARIADIC takes one path element at least
			return nil, true, wrongArgs(name, args)
		}
		a := append([]Expr(nil), args...)
		if err := jsonArg(a, 0, jsonFuncType(name)); err != nil {
			return nil, true, err
		}
		for i := 1; i < n; i++ {
			if t := a[i].Type(); !(t == types.Unknown || t.IsString()) {
				return nil, true, wrongArgs(name, args)
			}
			if a[i].Type() == types.Unknown {
				c, err := Cast(a[i], types.Text)
				if err != nil {
					return nil, true, err
				}
				a[i] = c
			}
		}
		asText := strings.HasSuffix(name, "_text")
		t := a[0].Type()
		if asText {
			t = types.Text
		}
		// Not strict: a NULL path element gives NULL, as in PostgreSQL,
		// but only the document's NULL is checked up front.
		return &Func{Name: name, Args: a, T: t, Fn: func(v []types.Datum) (types.Datum, error) {
			if v[0].IsNull() {
				return types.Null, nil
			}
			j, err := parsed(v[0])
			if err != nil {
				return types.Null, err
			}
			return jsonResult(jsonPath(j, v[1:]), v[0].K, asText), nil
		}}, true, nil
	case "jsonb_set", "jsonb_insert":
		if n != 3 && n != 4 {
			return nil, true, wrongArgs(name, args)
		}
		want := []types.Type{types.JSONB, types.ArrayOf(types.Text), types.JSONB, types.Bool}
		a := append([]Expr(nil), args...)
		for i := range a {
			if a[i].Type() == want[i] {
				continue
			}
			if a[i].Type() != types.Unknown && !(i == 1 && a[i].Type().IsArray() && a[i].Type().Elem().IsString()) {
				return nil, true, wrongArgs(name, args)
			}
			c, err := Cast(a[i], want[i])
			if err != nil {
				return nil, true, err
			}
			a[i] = c
		}
		insert := name == "jsonb_insert"
		return mk(types.JSONB, a, func(v []types.Datum) (types.Datum, error) {
			target, err := parsed(v[0])
			if err != nil {
				return types.Null, err
			}
			path, err := arrayElems(v[1], types.Text)
			if err != nil {
				return types.Null, err
			}
			nv, err := parsed(v[2])
			if err != nil {
				return types.Null, err
			}
			flag := !insert // create_missing defaults to true, insert_after to false
			if len(v) == 4 {
				flag = v[3].Bool()
			}
			if !insert && !flag && (target.Kind == types.JSONArray || target.Kind == types.JSONObject) && len(target.Elems) == 0 && len(target.Keys) == 0 {
				return v[0], nil // as PostgreSQL, before looking at the path
			}
			out, err := jsonSetPath(target, path, nv, insert, flag)
			if err != nil {
				return types.Null, err
			}
			return types.NewJSONB(out), nil
		})
	case "jsonb_strip_nulls", "jsonb_pretty":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		a := append([]Expr(nil), args...)
		if err := jsonArg(a, 0, types.JSONB); err != nil {
			return nil, true, err
		}
		pretty := name == "jsonb_pretty"
		t := types.JSONB
		if pretty {
			t = types.Text
		}
		return mk(t, a, func(v []types.Datum) (types.Datum, error) {
			j, err := parsed(v[0])
			if err != nil {
				return types.Null, err
			}
			if pretty {
				var sb strings.Builder
				types.WriteJSON(&sb, j, true)
				return types.NewString(sb.String()), nil
			}
			return types.NewJSONB(jsonStripNulls(j)), nil
		})
	}
	return nil, false, nil
}

// jsonFuncType is the type a json_ or jsonb_ function takes.
func jsonFuncType(name string) types.Type {
	if strings.HasPrefix(name, "jsonb_") {
		return types.JSONB
	}
	return types.JSON
}

func argTypes(args []Expr) []types.Type {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return ts
}

// jsonKeyText is an object key given as a value of type t: its text.
func jsonKeyText(d types.Datum, t types.Type) (string, error) {
	if t.IsArray() || t == types.JSON || t == types.JSONB {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "key value must be scalar, not array, composite, or json")
	}
	if d.K == types.KindString {
		return d.S, nil
	}
	if d.K == types.KindBool {
		return map[bool]string{true: "true", false: "false"}[d.Bool()], nil
	}
	return types.FormatText(d, t), nil
}

// DatumToJSON is to_jsonb of a value of type t: numbers, booleans and
// NULL as themselves (float NaN and infinities as strings), json values
// parsed, dates and timestamps as ISO 8601 strings, arrays as arrays,
// other values as the string of their text output.
func DatumToJSON(d types.Datum, t types.Type) (*types.JSONValue, error) {
	if d.IsNull() {
		return types.JSONNullValue(), nil
	}
	if t.IsArray() {
		elems, err := arrayElems(d, t.Elem())
		if err != nil {
			return nil, err
		}
		out := &types.JSONValue{Kind: types.JSONArray}
		for _, e := range elems {
			v, err := DatumToJSON(e, t.Elem())
			if err != nil {
				return nil, err
			}
			out.Elems = append(out.Elems, v)
		}
		return out, nil
	}
	switch d.K {
	case types.KindJSONB:
		return types.JSONOf(d)
	case types.KindJSON:
		return types.JSONBOfJSON(d.S)
	case types.KindBool:
		return types.JSONBoolValue(d.Bool()), nil
	case types.KindInt, types.KindFloat, types.KindDecimal:
		if d.K == types.KindFloat && (math.IsNaN(d.F) || math.IsInf(d.F, 0)) {
			return types.JSONStringValue(types.FormatText(d, t)), nil
		}
		if d.K == types.KindDecimal && d.D.Form != 0 {
			return types.JSONStringValue(types.FormatText(d, t)), nil
		}
		num, err := types.ParseNumeric(types.FormatText(d, t))
		if err != nil {
			return nil, err
		}
		return types.JSONNumberValue(num.D), nil
	case types.KindDate, types.KindTimestamp:
		return types.JSONStringValue(jsonDateTime(d, t)), nil
	}
	if d.K == types.KindString {
		return types.JSONStringValue(d.S), nil
	}
	return types.JSONStringValue(types.FormatText(d, t)), nil
}

// jsonDateTime is a date or timestamp as to_json writes it (ISO 8601:
// a T between date and time, the offset as +hh:mm).
func jsonDateTime(d types.Datum, t types.Type) string {
	s := types.FormatText(d, t)
	if d.K == types.KindDate || strings.Contains(s, "infinity") {
		return s
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i] + "T" + s[i+1:]
	}
	if t == types.Timestamptz {
		if i := strings.LastIndexAny(s, "+-"); i > 10 && len(s)-i == 3 {
			s += ":00"
		}
	}
	return s
}

// datumToJSONText is to_json's text of a value of type t.
func datumToJSONText(d types.Datum, t types.Type) (string, error) {
	if d.K == types.KindJSON || d.K == types.KindJSONB {
		return d.S, nil
	}
	if t.IsArray() && !d.IsNull() {
		elems, err := arrayElems(d, t.Elem())
		if err != nil {
			return "", err
		}
		parts := make([]string, len(elems))
		for i, e := range elems {
			if parts[i], err = datumToJSONText(e, t.Elem()); err != nil {
				return "", err
			}
		}
		return "[" + strings.Join(parts, ",") + "]", nil
	}
	if d.K == types.KindFloat && !math.IsNaN(d.F) && !math.IsInf(d.F, 0) {
		return types.FormatText(d, t), nil
	}
	v, err := DatumToJSON(d, t)
	if err != nil {
		return "", err
	}
	return types.FormatJSON(v), nil
}

// jsonStripNulls drops object members whose value is null, at every
// level (array elements stay).
func jsonStripNulls(v *types.JSONValue) *types.JSONValue {
	switch v.Kind {
	case types.JSONArray:
		out := &types.JSONValue{Kind: types.JSONArray}
		for _, e := range v.Elems {
			out.Elems = append(out.Elems, jsonStripNulls(e))
		}
		return out
	case types.JSONObject:
		out := &types.JSONValue{Kind: types.JSONObject}
		for i, k := range v.Keys {
			if v.Vals[i].Kind == types.JSONNull {
				continue
			}
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, jsonStripNulls(v.Vals[i]))
		}
		return out
	}
	return v
}

// jsonSetPath is jsonb_set (insert false, flag create_missing) and
// jsonb_insert (insert true, flag insert_after), as PostgreSQL's setPath.
func jsonSetPath(v *types.JSONValue, path []types.Datum, nv *types.JSONValue, insert, flag bool) (*types.JSONValue, error) {
	if v.Kind < types.JSONArray {
		return nil, jsonError("cannot set path in scalar")
	}
	for i, p := range path {
		if p.IsNull() {
			return nil, sqlerr.New(sqlerr.NullValueNotAllowed, "path element at position %d is null", i+1)
		}
	}
	if len(path) == 0 {
		return v, nil
	}
	return setPathAt(v, path, 0, nv, insert, flag)
}

func setPathAt(v *types.JSONValue, path []types.Datum, level int, nv *types.JSONValue, insert, flag bool) (*types.JSONValue, error) {
	last := level == len(path)-1
	create := insert || flag // a value is added where the path ends past the data
	switch v.Kind {
	case types.JSONObject:
		key := path[level].S
		out := &types.JSONValue{Kind: types.JSONObject}
		found := false
		for i, k := range v.Keys {
			e := v.Vals[i]
			if k == key && !found {
				found = true
				if last {
					if insert {
						return nil, sqlerr.New(sqlerr.InvalidParameterValue, "cannot replace existing key").
							WithHint("Try using the function jsonb_set to replace key value.")
					}
					e = nv
				} else if e.Kind >= types.JSONArray {
					var err error
					if e, err = setPathAt(e, path, level+1, nv, insert, flag); err != nil {
						return nil, err
					}
				}
			}
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, e)
		}
		if !found && last && create {
			out.Keys = append(out.Keys, key)
			out.Vals = append(out.Vals, nv)
			types.NormalizeJSON(out)
		}
		return out, nil
	case types.JSONArray:
		idx, err := pathIndex(path[level], level+1)
		if err != nil {
			return nil, err
		}
		n := int64(len(v.Elems))
		prepend := false
		if idx < 0 {
			if -idx > n {
				prepend = true
			} else {
				idx += n
			}
		}
		if idx > n {
			idx = n
		}
		out := &types.JSONValue{Kind: types.JSONArray}
		if (prepend || n == 0) && last && create {
			out.Elems = append(out.Elems, nv)
			if n == 0 {
				return out, nil
			}
		}
		for i, e := range v.Elems {
			if int64(i) == idx && !prepend {
				if last {
					switch {
					case insert && !flag: // before
						out.Elems = append(out.Elems, nv, e)
					case insert: // after
						out.Elems = append(out.Elems, e, nv)
					default:
						out.Elems = append(out.Elems, nv)
					}
					continue
				}
				if e.Kind >= types.JSONArray {
					if e, err = setPathAt(e, path, level+1, nv, insert, flag); err != nil {
						return nil, err
					}
				}
			}
			out.Elems = append(out.Elems, e)
		}
		if idx == n && !prepend && last && create {
			out.Elems = append(out.Elems, nv)
		}
		return out, nil
	}
	return v, nil
}
