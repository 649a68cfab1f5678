package expr

import (
	"strings"

	"streamdb/types"
)

// JSONRows binds the one-column set-returning json functions of
// PostgreSQL 15: jsonb_array_elements and json_array_elements (each
// element), their _text forms (each element as text: a string's value,
// NULL for a JSON null) and jsonb_object_keys / json_object_keys (each
// top-level key). All are strict: a NULL argument gives no rows. The
// returned function gives the rows for the argument's value; t is the
// column's type. ok is false for other names.
func JSONRows(name string, args []Expr) (rows func([]types.Datum) ([]types.Datum, error), bound []Expr, t types.Type, ok bool, err error) {
	var in types.Type
	switch name {
	case "jsonb_path_query":
		rows, bound, err = jsonPathRows(name, args)
		return rows, bound, types.JSONB, true, err
	case "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys":
		in = types.JSONB
	case "json_array_elements", "json_array_elements_text", "json_object_keys":
		in = types.JSON
	default:
		return nil, nil, types.Unknown, false, nil
	}
	if len(args) != 1 || (args[0].Type() != in && args[0].Type() != types.Unknown) {
		return nil, nil, types.Unknown, true, wrongArgs(name, args)
	}
	a, err := Cast(args[0], in)
	if err != nil {
		return nil, nil, types.Unknown, true, err
	}
	keys := name == "jsonb_object_keys" || name == "json_object_keys"
	asText := !keys && len(name) > 5 && name[len(name)-5:] == "_text"
	t = in
	if keys || asText {
		t = types.Text
	}
	rows = func(v []types.Datum) ([]types.Datum, error) {
		if v[0].IsNull() {
			return nil, nil
		}
		j, err := types.JSONOf(v[0])
		if err != nil {
			return nil, err
		}
		if keys {
			switch j.Kind {
			case types.JSONObject:
			case types.JSONArray:
				return nil, jsonError("cannot call %s on an array", name)
			default:
				return nil, jsonError("cannot call %s on a scalar", name)
			}
			out := make([]types.Datum, len(j.Keys))
			for i, k := range j.Keys {
				out[i] = types.NewString(k) // a json object's repeated keys too
			}
			return out, nil
		}
		switch j.Kind {
		case types.JSONArray:
		case types.JSONObject:
			return nil, jsonError("cannot extract elements from an object")
		default:
			return nil, jsonError("cannot extract elements from a scalar")
		}
		out := make([]types.Datum, len(j.Elems))
		for i, e := range j.Elems {
			out[i] = jsonResult(e, v[0].K, asText)
		}
		return out, nil
	}
	return rows, []Expr{a}, t, true, nil
}

// JSONEachRows binds jsonb_each, jsonb_each_text, json_each and
// json_each_text as two one-column functions run side by side: the keys
// of the object, then their values (as text for the _text forms, a
// string's value and NULL for a JSON null). ok is false for other names.
func JSONEachRows(name string, args []Expr) (keys, vals func([]types.Datum) ([]types.Datum, error), bound []Expr, vt types.Type, ok bool, err error) {
	var in types.Type
	switch name {
	case "jsonb_each", "jsonb_each_text":
		in = types.JSONB
	case "json_each", "json_each_text":
		in = types.JSON
	default:
		return nil, nil, nil, types.Unknown, false, nil
	}
	if len(args) != 1 || (args[0].Type() != in && args[0].Type() != types.Unknown) {
		return nil, nil, nil, types.Unknown, true, wrongArgs(name, args)
	}
	a, err := Cast(args[0], in)
	if err != nil {
		return nil, nil, nil, types.Unknown, true, err
	}
	asText := name[len(name)-5:] == "_text"
	vt = in
	if asText {
		vt = types.Text
	}
	object := func(d types.Datum) (*types.JSONValue, error) {
		j, err := types.JSONOf(d)
		if err != nil {
			return nil, err
		}
		if j.Kind != types.JSONObject {
			return nil, jsonError("cannot call %s on a non-object", name)
		}
		return j, nil
	}
	keys = func(v []types.Datum) ([]types.Datum, error) {
		if v[0].IsNull() {
			return nil, nil
		}
		j, err := object(v[0])
		if err != nil {
			return nil, err
		}
		out := make([]types.Datum, len(j.Keys))
		for i, k := range j.Keys {
			out[i] = types.NewString(k)
		}
		return out, nil
	}
	vals = func(v []types.Datum) ([]types.Datum, error) {
		if v[0].IsNull() {
			return nil, nil
		}
		j, err := object(v[0])
		if err != nil {
			return nil, err
		}
		out := make([]types.Datum, len(j.Vals))
		for i, e := range j.Vals {
			out[i] = jsonResult(e, v[0].K, asText)
		}
		return out, nil
	}
	return keys, vals, []Expr{a}, vt, true, nil
}

// JSONEachRecords binds jsonb_each, jsonb_each_text, json_each and
// json_each_text called in a select list, where PostgreSQL gives each
// member as one record (key, value): its rows are the records' text as
// record_out writes it, "(key,value)". ok is false for other names.
func JSONEachRecords(name string, args []Expr) (rows func([]types.Datum) ([]types.Datum, error), bound []Expr, t types.Type, ok bool, err error) {
	keys, vals, bound, _, ok, err := JSONEachRows(name, args)
	if !ok || err != nil {
		return nil, nil, types.Unknown, ok, err
	}
	rows = func(v []types.Datum) ([]types.Datum, error) {
		ks, err := keys(v)
		if err != nil {
			return nil, err
		}
		vs, err := vals(v)
		if err != nil {
			return nil, err
		}
		out := make([]types.Datum, len(ks))
		for i := range ks {
			var sb strings.Builder
			sb.WriteByte('(')
			writeRecordField(&sb, ks[i])
			sb.WriteByte(',')
			writeRecordField(&sb, vs[i])
			sb.WriteByte(')')
			out[i] = types.NewString(sb.String())
		}
		return out, nil
	}
	return rows, bound, types.Text, true, nil
}

// writeRecordField writes one field of a record's text as PostgreSQL's
// record_out does: nothing for NULL; quoted (with " and \ doubled) when
// empty or holding a quote, backslash, parenthesis, comma or space.
func writeRecordField(sb *strings.Builder, d types.Datum) {
	if d.IsNull() {
		return
	}
	s := d.S
	quote := s == ""
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case '"', '\\', '(', ')', ',', ' ', '\t', '\n', '\r', '\v', '\f':
			quote = true
		}
	}
	if !quote {
		sb.WriteString(s)
		return
	}
	sb.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			sb.WriteByte(s[i])
		}
		sb.WriteByte(s[i])
	}
	sb.WriteByte('"')
}
