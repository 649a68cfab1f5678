package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// The jsonb_path_* functions and the @? and @@ operators (written by
// front as jsonb_path_exists_opr and jsonb_path_match_opr, as
// PostgreSQL names their functions). The path is text (streamdb has no
// jsonpath type), parsed when the function runs.

// bindPathArgs checks and casts the arguments (target jsonb, path
// [, vars jsonb [, silent boolean]]).
func bindPathArgs(name string, args []Expr, maxArgs int) ([]Expr, error) {
	if len(args) < 2 || len(args) > maxArgs {
		return nil, wrongArgs(name, args)
	}
	want := []types.Type{types.JSONB, types.Text, types.JSONB, types.Bool}
	out := make([]Expr, len(args))
	for i, a := range args {
		t := a.Type()
		ok := t == want[i] || t == types.Unknown || i == 1 && t.IsString()
		if !ok {
			return nil, wrongArgs(name, args)
		}
		c, err := Cast(a, want[i])
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// runPath evaluates the path of v (the bound arguments' values) over its
// target; ok is false when silent suppressed an error. On an error, items
// are those found before it (evalJSONPath). With exists, a lax path
// stops at its first item, as PostgreSQL's jsonb_path_exists does: an
// error after it is not reached (a strict path is evaluated whole, to
// find any error).
func runPath(v []types.Datum, silent, exists bool) ([]*types.JSONValue, bool, error) {
	target, err := types.JSONOf(v[0])
	if err != nil {
		return nil, false, err
	}
	path, err := parseJSONPath(v[1].S)
	if err != nil {
		return nil, false, err
	}
	var vars *types.JSONValue
	if len(v) > 2 {
		if vars, err = types.JSONOf(v[2]); err != nil {
			return nil, false, err
		}
		if vars.Kind != types.JSONObject {
			return nil, false, &sqlerr.Error{Code: sqlerr.InvalidParameterValue, Message: "\"vars\" argument is not an object",
				Detail: "Jsonpath parameters should be encoded as key-value pairs of \"vars\" object."}
		}
	}
	if len(v) > 3 {
		silent = silent || v[3].Bool()
	}
	items, ok, err := evalJSONPath(target, path, vars, silent)
	if exists && !path.strict && len(items) > 0 {
		return items[:1], true, nil
	}
	return items, ok, err
}

// JSONPathExistsOpFunc and JSONPathMatchOpFunc stand for the operators
// @? and @@ (front writes them): calls of jsonb_path_exists_opr and
// jsonb_path_match_opr, which name no output column.
const (
	JSONPathExistsOpFunc = "streamdb_jsonpath_exists_op"
	JSONPathMatchOpFunc  = "streamdb_jsonpath_match_op"
)

var jsonPathOperatorFuncs = map[string]string{JSONPathExistsOpFunc: "jsonb_path_exists_opr", JSONPathMatchOpFunc: "jsonb_path_match_opr"}

// jsonPathFunc builds the scalar jsonb_path_* functions; ok is false for
// other names.
func jsonPathFunc(name string, args []Expr) (Expr, bool, error) {
	if f, ok := jsonPathOperatorFuncs[name]; ok {
		name = f
	}
	var t types.Type
	maxArgs := 4
	switch name {
	case "jsonpath": // a cast, as recorded in a view's plan
		if len(args) != 1 {
			return nil, true, wrongArgs(name, args)
		}
		e, err := JSONPathCast(args[0])
		return e, true, err
	case "jsonb_path_exists", "jsonb_path_match":
		t = types.Bool
	case "jsonb_path_exists_opr", "jsonb_path_match_opr":
		t, maxArgs = types.Bool, 2
	case "jsonb_path_query_array", "jsonb_path_query_first":
		t = types.JSONB
	default:
		return nil, false, nil
	}
	a, err := bindPathArgs(name, args, maxArgs)
	if err != nil {
		return nil, true, err
	}
	silentOp := maxArgs == 2
	fn := func(v []types.Datum) (types.Datum, error) {
		items, ok, err := runPath(v, silentOp, name == "jsonb_path_exists" || name == "jsonb_path_exists_opr")
		if err != nil {
			return types.Null, err
		}
		switch name {
		case "jsonb_path_exists", "jsonb_path_exists_opr":
			if !ok {
				return types.Null, nil
			}
			return types.NewBool(len(items) > 0), nil
		case "jsonb_path_match", "jsonb_path_match_opr":
			if len(items) == 1 {
				switch items[0].Kind {
				case types.JSONBool:
					return types.NewBool(items[0].Bool), nil
				case types.JSONNull:
					return types.Null, nil
				}
			}
			if silentOp || len(v) > 3 && v[3].Bool() {
				return types.Null, nil
			}
			return types.Null, sqlerr.New(sqlerr.SingletonSQLJSONItemRequired, "single boolean result is expected")
		case "jsonb_path_query_array":
			return types.NewJSONB(&types.JSONValue{Kind: types.JSONArray, Elems: items}), nil
		}
		if len(items) == 0 {
			return types.Null, nil
		}
		return types.NewJSONB(items[0]), nil
	}
	return &Func{Name: name, Args: a, T: t, Fn: strict(fn)}, true, nil
}

// jsonPathRows binds jsonb_path_query, the set-returning one.
func jsonPathRows(name string, args []Expr) (rows func([]types.Datum) ([]types.Datum, error), bound []Expr, err error) {
	a, err := bindPathArgs(name, args, 4)
	if err != nil {
		return nil, nil, err
	}
	return func(v []types.Datum) ([]types.Datum, error) {
		for _, d := range v {
			if d.IsNull() {
				return nil, nil
			}
		}
		items, _, err := runPath(v, false, false)
		if err != nil {
			return nil, err
		}
		out := make([]types.Datum, len(items))
		for i, it := range items {
			out[i] = types.NewJSONB(it)
		}
		return out, nil
	}, a, nil
}

// JSONPathCast is x::jsonpath: streamdb has no jsonpath type, so the
// cast checks that the text is a path (the syntax error PostgreSQL's
// input function gives) and leaves it text, which the jsonb_path_
// functions take. The text is kept as written, not in PostgreSQL's
// printed form.
func JSONPathCast(x Expr) (Expr, error) {
	if t := x.Type(); t != types.Unknown && !t.IsString() {
		return nil, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to jsonpath", t).
			WithHint("Cast it to text first, or write the path as a string.")
	}
	a, err := Cast(x, types.Text)
	if err != nil {
		return nil, err
	}
	return &Func{Name: "jsonpath", Args: []Expr{a}, T: types.Text, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		if _, err := parseJSONPath(v[0].S); err != nil {
			return types.Null, err
		}
		return v[0], nil
	})}, nil
}
