package expr

import (
	"strconv"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// The json and jsonb operators. front writes each operator the TiDB
// parser cannot read as a call of its name in jsonOperatorFuncs; Call
// turns the call into the infix operator, which plan records keep as
// such (Rebuild goes through Binary).
var jsonOperatorFuncs = map[string]string{
	"streamdb_json_get": "->", "streamdb_json_get_text": "->>",
	"streamdb_json_path": "#>", "streamdb_json_path_text": "#>>",
	"streamdb_json_exists": "?", "streamdb_json_exists_any": "?|", "streamdb_json_exists_all": "?&",
	"streamdb_json_delete_path": "#-",
}

// JSONOperatorFunc is the name of the call front writes for the json
// operator op, or "".
func JSONOperatorFunc(op string) string {
	for f, o := range jsonOperatorFuncs {
		if o == op {
			return f
		}
	}
	return ""
}

// IsJSONOperatorFunc reports whether name is one of those calls.
func IsJSONOperatorFunc(name string) bool {
	_, ok := jsonOperatorFuncs[name]
	_, path := jsonPathOperatorFuncs[name]
	return ok || path
}

func isJSONType(t types.Type) bool { return t == types.JSON || t == types.JSONB }

// jsonBinary builds l op r for the json operators; ok is false when op
// over these operand types is not one of them.
func jsonBinary(op string, l, r Expr) (Expr, bool, error) {
	lt, rt := l.Type(), r.Type()
	switch op {
	case "->", "->>", "#>", "#>>", "?", "?|", "?&", "#-":
	case "@>", "<@", "||":
		if !(lt == types.JSONB && (rt == types.JSONB || rt == types.Unknown) || rt == types.JSONB && lt == types.Unknown) {
			return nil, false, nil
		}
	case "-":
		if lt != types.JSONB {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	if lt == types.Unknown {
		// PostgreSQL resolves an unknown left operand of these operators
		// to jsonb.
		var err error
		if l, err = Cast(l, types.JSONB); err != nil {
			return nil, true, err
		}
		lt = types.JSONB
	}
	if !isJSONType(lt) || (lt == types.JSON && op != "->" && op != "->>" && op != "#>" && op != "#>>") {
		return nil, true, opTypeError(op, lt, rt)
	}
	mk := func(t types.Type, r Expr, fn func(a, b types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return binary(&Func{Name: op, Infix: true, Args: []Expr{l, r}, T: t}, func(a, b types.Datum) (types.Datum, error) {
			if a.IsNull() || b.IsNull() {
				return types.Null, nil
			}
			return fn(a, b)
		}), true, nil
	}
	castR := func(t types.Type) (Expr, error) {
		if rt == t {
			return r, nil
		}
		if rt != types.Unknown && !(t == types.Text && rt.IsString()) && !(t == types.ArrayOf(types.Text) && rt.IsArray() && rt.Elem().IsString()) {
			return nil, opTypeError(op, lt, rt)
		}
		return Cast(r, t)
	}
	textArray := types.ArrayOf(types.Text)
	switch op {
	case "->", "->>":
		asText := op == "->>"
		t := lt
		if asText {
			t = types.Text
		}
		if rt.IsInteger() {
			jsonb := lt == types.JSONB
			return mk(t, r, func(a, b types.Datum) (types.Datum, error) {
				v, err := types.JSONOf(a)
				if err != nil {
					return types.Null, err
				}
				if jsonb && v.Kind != types.JSONArray && v.Kind != types.JSONObject && (b.I == 0 || b.I == -1) {
					// PostgreSQL stores a jsonb scalar as an array of one
					// element, which jsonb -> int indexes.
					return jsonResult(v, a.K, asText), nil
				}
				return jsonResult(jsonIndex(v, b.I), a.K, asText), nil
			})
		}
		rr, err := castR(types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(t, rr, func(a, b types.Datum) (types.Datum, error) {
			if a.K == types.KindJSONB {
				if d, ok := jsonbMember(a.S, b.S, asText); ok {
					return d, nil
				}
			}
			v, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			return jsonResult(v.Lookup(b.S), a.K, asText), nil
		})
	case "#>", "#>>":
		asText := op == "#>>"
		t := lt
		if asText {
			t = types.Text
		}
		rr, err := castR(textArray)
		if err != nil {
			return nil, true, err
		}
		return mk(t, rr, func(a, b types.Datum) (types.Datum, error) {
			v, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			path, err := arrayElems(b, types.Text)
			if err != nil {
				return types.Null, err
			}
			return jsonResult(jsonPath(v, path), a.K, asText), nil
		})
	case "?":
		rr, err := castR(types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Bool, rr, func(a, b types.Datum) (types.Datum, error) {
			v, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			return types.NewBool(jsonHasKey(v, b.S)), nil
		})
	case "?|", "?&":
		rr, err := castR(textArray)
		if err != nil {
			return nil, true, err
		}
		all := op == "?&"
		return mk(types.Bool, rr, func(a, b types.Datum) (types.Datum, error) {
			v, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			keys, err := arrayElems(b, types.Text)
			if err != nil {
				return types.Null, err
			}
			for _, k := range keys {
				if k.IsNull() {
					continue // PostgreSQL skips NULL keys
				}
				if jsonHasKey(v, k.S) != all {
					return types.NewBool(!all), nil
				}
			}
			return types.NewBool(all), nil
		})
	case "@>", "<@":
		rr, err := Cast(r, types.JSONB)
		if err != nil {
			return nil, true, err
		}
		contained := op == "<@"
		return mk(types.Bool, rr, func(a, b types.Datum) (types.Datum, error) {
			x, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			y, err := types.JSONOf(b)
			if err != nil {
				return types.Null, err
			}
			if contained {
				x, y = y, x
			}
			return types.NewBool(JSONContains(x, y)), nil
		})
	case "||":
		rr, err := Cast(r, types.JSONB)
		if err != nil {
			return nil, true, err
		}
		return mk(types.JSONB, rr, func(a, b types.Datum) (types.Datum, error) {
			x, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			y, err := types.JSONOf(b)
			if err != nil {
				return types.Null, err
			}
			return types.NewJSONB(jsonConcat(x, y)), nil
		})
	case "-":
		if rt.IsInteger() {
			return mk(types.JSONB, r, func(a, b types.Datum) (types.Datum, error) {
				v, err := types.JSONOf(a)
				if err != nil {
					return types.Null, err
				}
				out, err := jsonDeleteIndex(v, b.I)
				if err != nil {
					return types.Null, err
				}
				return types.NewJSONB(out), nil
			})
		}
		if rt.IsArray() {
			rr, err := castR(textArray)
			if err != nil {
				return nil, true, err
			}
			return mk(types.JSONB, rr, func(a, b types.Datum) (types.Datum, error) {
				v, err := types.JSONOf(a)
				if err != nil {
					return types.Null, err
				}
				keys, err := arrayElems(b, types.Text)
				if err != nil {
					return types.Null, err
				}
				for _, k := range keys {
					if k.IsNull() {
						continue
					}
					if v, err = jsonDeleteKey(v, k.S); err != nil {
						return types.Null, err
					}
				}
				return types.NewJSONB(v), nil
			})
		}
		rr, err := castR(types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(types.JSONB, rr, func(a, b types.Datum) (types.Datum, error) {
			v, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			out, err := jsonDeleteKey(v, b.S)
			if err != nil {
				return types.Null, err
			}
			return types.NewJSONB(out), nil
		})
	case "#-":
		rr, err := castR(textArray)
		if err != nil {
			return nil, true, err
		}
		return mk(types.JSONB, rr, func(a, b types.Datum) (types.Datum, error) {
			v, err := types.JSONOf(a)
			if err != nil {
				return types.Null, err
			}
			path, err := arrayElems(b, types.Text)
			if err != nil {
				return types.Null, err
			}
			out, err := jsonDeletePath(v, path)
			if err != nil {
				return types.Null, err
			}
			return types.NewJSONB(out), nil
		})
	}
	return nil, false, nil
}

// jsonResult is the datum of an extracted value v (nil: NULL) of a value
// of kind k: json keeps the text as written, jsonb the canonical text;
// asText gives a string's value and NULL for a JSON null.
func jsonResult(v *types.JSONValue, k types.Kind, asText bool) types.Datum {
	switch {
	case v == nil:
		return types.Null
	case asText && v.Kind == types.JSONNull:
		return types.Null
	case asText && v.Kind == types.JSONString:
		return types.NewString(v.Str)
	case k == types.KindJSON:
		if asText {
			return types.NewString(v.Raw)
		}
		return types.NewJSONText(v.Raw)
	case asText:
		return types.NewString(types.FormatJSON(v))
	}
	return types.NewJSONB(v)
}

// jsonIndex is element i of array v (from the end when negative), or nil.
func jsonIndex(v *types.JSONValue, i int64) *types.JSONValue {
	if v.Kind != types.JSONArray {
		return nil
	}
	n := int64(len(v.Elems))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil
	}
	return v.Elems[i]
}

// jsonPath follows path (text datums) from v: keys of objects, integer
// indexes of arrays; nil where a step finds nothing or is NULL.
func jsonPath(v *types.JSONValue, path []types.Datum) *types.JSONValue {
	for _, p := range path {
		if p.IsNull() || v == nil {
			return nil
		}
		switch v.Kind {
		case types.JSONObject:
			v = v.Lookup(p.S)
		case types.JSONArray:
			i, err := strconv.ParseInt(strings.TrimSpace(p.S), 10, 32)
			if err != nil {
				return nil
			}
			v = jsonIndex(v, i)
		default:
			return nil
		}
	}
	return v
}

// jsonHasKey is jsonb ? key: a key of an object, a string element of an
// array, or the string a scalar is.
func jsonHasKey(v *types.JSONValue, key string) bool {
	switch v.Kind {
	case types.JSONObject:
		return v.Lookup(key) != nil
	case types.JSONArray:
		for _, e := range v.Elems {
			if e.Kind == types.JSONString && e.Str == key {
				return true
			}
		}
		return false
	case types.JSONString:
		return v.Str == key
	}
	return false
}

// JSONContains is a @> b (JsonbDeepContains): an object contains the
// members of another object whose values it contains, an array every
// element of another array (in any order, scalars equal and containers
// contained by one of its containers) or a scalar; a scalar only the
// scalar equal to it.
func JSONContains(a, b *types.JSONValue) bool {
	if a.Kind < types.JSONArray && b.Kind < types.JSONArray {
		return types.CompareJSONB(a, b) == 0
	}
	if a.Kind < types.JSONArray {
		return false // a raw scalar contains no array or object
	}
	if b.Kind < types.JSONArray && a.Kind == types.JSONArray {
		b = &types.JSONValue{Kind: types.JSONArray, Elems: []*types.JSONValue{b}}
	}
	return jsonDeepContains(a, b)
}

func jsonDeepContains(a, b *types.JSONValue) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case types.JSONObject:
		for i, k := range b.Keys {
			av := a.Lookup(k)
			if av == nil {
				return false
			}
			bv := b.Vals[i]
			if bv.Kind < types.JSONArray || av.Kind < types.JSONArray {
				if av.Kind != bv.Kind || types.CompareJSONB(av, bv) != 0 {
					return false
				}
				continue
			}
			if !jsonDeepContains(av, bv) {
				return false
			}
		}
		return true
	case types.JSONArray:
	next:
		for _, be := range b.Elems {
			for _, ae := range a.Elems {
				if be.Kind < types.JSONArray {
					if ae.Kind == be.Kind && types.CompareJSONB(ae, be) == 0 {
						continue next
					}
				} else if jsonDeepContains(ae, be) {
					continue next
				}
			}
			return false
		}
		return true
	}
	return types.CompareJSONB(a, b) == 0
}

// jsonConcat is a || b: two objects merge (b's values win), otherwise the
// elements of both as arrays (a scalar or object is one element).
func jsonConcat(a, b *types.JSONValue) *types.JSONValue {
	if a.Kind == types.JSONObject && b.Kind == types.JSONObject {
		out := &types.JSONValue{Kind: types.JSONObject}
		out.Keys = append(append(out.Keys, a.Keys...), b.Keys...)
		out.Vals = append(append(out.Vals, a.Vals...), b.Vals...)
		return types.NormalizeJSON(out)
	}
	elems := func(v *types.JSONValue) []*types.JSONValue {
		if v.Kind == types.JSONArray {
			return v.Elems
		}
		return []*types.JSONValue{v}
	}
	out := &types.JSONValue{Kind: types.JSONArray}
	out.Elems = append(append(out.Elems, elems(a)...), elems(b)...)
	return out
}

func jsonError(format string, args ...any) error {
	return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
}

// jsonDeleteKey is jsonb - text: the object without key, or the array
// without its string elements equal to key.
func jsonDeleteKey(v *types.JSONValue, key string) (*types.JSONValue, error) {
	switch v.Kind {
	case types.JSONObject:
		out := &types.JSONValue{Kind: types.JSONObject}
		for i, k := range v.Keys {
			if k != key {
				out.Keys = append(out.Keys, k)
				out.Vals = append(out.Vals, v.Vals[i])
			}
		}
		return out, nil
	case types.JSONArray:
		out := &types.JSONValue{Kind: types.JSONArray}
		for _, e := range v.Elems {
			if !(e.Kind == types.JSONString && e.Str == key) {
				out.Elems = append(out.Elems, e)
			}
		}
		return out, nil
	}
	return nil, jsonError("cannot delete from scalar")
}

// jsonDeleteIndex is jsonb - integer.
func jsonDeleteIndex(v *types.JSONValue, i int64) (*types.JSONValue, error) {
	switch v.Kind {
	case types.JSONObject:
		return nil, jsonError("cannot delete from object using integer index")
	case types.JSONArray:
		n := int64(len(v.Elems))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return v, nil
		}
		out := &types.JSONValue{Kind: types.JSONArray}
		out.Elems = append(append(out.Elems, v.Elems[:i]...), v.Elems[i+1:]...)
		return out, nil
	}
	return nil, jsonError("cannot delete from scalar")
}

// pathIndex reads path element pos (1-based) as an array index.
func pathIndex(p types.Datum, pos int) (int64, error) {
	i, err := strconv.ParseInt(strings.TrimSpace(p.S), 10, 32)
	if err != nil {
		return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "path element at position %d is not an integer: \"%s\"", pos, p.S)
	}
	return i, nil
}

// jsonDeletePath is jsonb #- text[].
func jsonDeletePath(v *types.JSONValue, path []types.Datum) (*types.JSONValue, error) {
	if v.Kind < types.JSONArray {
		return nil, jsonError("cannot delete path in scalar")
	}
	if len(v.Elems) == 0 && len(v.Keys) == 0 {
		return v, nil // as PostgreSQL, before looking at the path
	}
	for i, p := range path {
		if p.IsNull() {
			return nil, jsonError("path element at position %d is null", i+1)
		}
	}
	if len(path) == 0 {
		return v, nil
	}
	return jsonDeletePathAt(v, path, 0)
}

func jsonDeletePathAt(v *types.JSONValue, path []types.Datum, level int) (*types.JSONValue, error) {
	last := level == len(path)-1
	switch v.Kind {
	case types.JSONObject:
		out := &types.JSONValue{Kind: types.JSONObject}
		for i, k := range v.Keys {
			e := v.Vals[i]
			if k == path[level].S {
				if last {
					continue
				}
				if e.Kind >= types.JSONArray {
					var err error
					if e, err = jsonDeletePathAt(e, path, level+1); err != nil {
						return nil, err
					}
				}
			}
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, e)
		}
		return out, nil
	case types.JSONArray:
		idx, err := pathIndex(path[level], level+1)
		if err != nil {
			return nil, err
		}
		n := int64(len(v.Elems))
		if idx < 0 {
			idx += n
		}
		out := &types.JSONValue{Kind: types.JSONArray}
		for i, e := range v.Elems {
			if int64(i) == idx {
				if last {
					continue
				}
				if e.Kind >= types.JSONArray {
					if e, err = jsonDeletePathAt(e, path, level+1); err != nil {
						return nil, err
					}
				}
			}
			out.Elems = append(out.Elems, e)
		}
		return out, nil
	}
	return v, nil
}

// jsonbMember is jsonb -> key (->> key if asText) read from the canonical
// text s without parsing it (types.JSONBMemberRaw); ok is false where
// that does not apply, and the caller parses.
func jsonbMember(s, key string, asText bool) (types.Datum, bool) {
	raw, found, ok := types.JSONBMemberRaw(s, key)
	switch {
	case !ok:
		return types.Null, false
	case !found:
		return types.Null, true
	case !asText:
		return types.Datum{K: types.KindJSONB, S: raw}, true
	case raw == "null":
		return types.Null, true
	case raw[0] == '"':
		if strings.IndexByte(raw, '\\') >= 0 {
			return types.Null, false
		}
		return types.NewString(raw[1 : len(raw)-1]), true
	}
	return types.NewString(raw), true
}
