package expr

import (
	"encoding/json"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// RowJSON is the shape of a row value that row_to_json, to_json or
// to_jsonb turns into a JSON object: the fields' names (a table's
// columns, or f1, f2, ... of ROW(...)), each a value or a nested row.
// streamdb has no record type, so the binder passes the row's fields as
// arguments, after a first constant argument holding this shape, which
// lets a stored plan rebuild the call (Call "row_to_json").
type RowJSON struct {
	JSONB  bool       `json:"jsonb,omitempty"`
	Pretty bool       `json:"pretty,omitempty"`
	Fields []RowField `json:"fields"`
}

// RowField is one field of a row: a value (Row nil) or a nested row.
type RowField struct {
	Name string   `json:"name"`
	Row  *RowJSON `json:"row,omitempty"`
}

// RowToJSONFunc is the name of the call RowToJSON builds.
const RowToJSONFunc = "row_to_json"

// leaves counts the values of r's fields, nested rows' included.
func (r *RowJSON) leaves() int {
	n := 0
	for _, f := range r.Fields {
		if f.Row != nil {
			n += f.Row.leaves()
		} else {
			n++
		}
	}
	return n
}

// RowToJSON builds the JSON object (json, or jsonb when r.JSONB) of the
// row of shape r whose values are leaves, in order.
func RowToJSON(r *RowJSON, leaves []Expr) (Expr, error) {
	desc, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	args := append([]Expr{&Const{D: types.NewString(string(desc)), T: types.Text}}, leaves...)
	return rowToJSONCall(args)
}

// rowToJSONCall is the call over the arguments RowToJSON makes.
func rowToJSONCall(args []Expr) (Expr, error) {
	c, ok := args[0].(*Const)
	var r RowJSON
	if !ok || c.T != types.Text || json.Unmarshal([]byte(c.D.S), &r) != nil || r.leaves() != len(args)-1 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function row_to_json(%s) does not exist", argTypeNames(args)).
			WithHint("row_to_json takes a row: a table's name, row_to_json(t), or a row constructor, row_to_json(ROW(1, 'a')).")
	}
	ts := argTypes(args[1:])
	t := types.JSON
	if r.JSONB {
		t = types.JSONB
	}
	return &Func{Name: RowToJSONFunc, Args: args, T: t, Fn: func(v []types.Datum) (types.Datum, error) {
		v = v[1:]
		if r.JSONB {
			obj, _, err := r.jsonbValue(v, ts)
			if err != nil {
				return types.Null, err
			}
			return types.NewJSONB(types.NormalizeJSON(obj)), nil
		}
		var sb strings.Builder
		if _, err := r.writeJSON(&sb, v, ts); err != nil {
			return types.Null, err
		}
		return types.NewJSONText(sb.String()), nil
	}}, nil
}

// writeJSON writes the object of r as PostgreSQL's composite_to_json
// does ({"a":1,"b":"x"}; with pretty, fields on lines of their own) from
// the values v of types ts, and returns how many values it read.
func (r *RowJSON) writeJSON(sb *strings.Builder, v []types.Datum, ts []types.Type) (int, error) {
	sb.WriteByte('{')
	n := 0
	for i, f := range r.Fields {
		if i > 0 {
			if r.Pretty {
				sb.WriteString(",\n ")
			} else {
				sb.WriteByte(',')
			}
		}
		types.WriteJSONString(sb, f.Name)
		sb.WriteByte(':')
		if f.Row != nil {
			m, err := f.Row.writeJSON(sb, v[n:], ts[n:])
			if err != nil {
				return 0, err
			}
			n += m
			continue
		}
		s, err := datumToJSONText(v[n], ts[n])
		if err != nil {
			return 0, err
		}
		if v[n].IsNull() {
			s = "null"
		}
		sb.WriteString(s)
		n++
	}
	sb.WriteByte('}')
	return n, nil
}

// jsonbValue is writeJSON's object as a jsonb value.
func (r *RowJSON) jsonbValue(v []types.Datum, ts []types.Type) (*types.JSONValue, int, error) {
	obj := &types.JSONValue{Kind: types.JSONObject}
	n := 0
	for _, f := range r.Fields {
		var val *types.JSONValue
		if f.Row != nil {
			sub, m, err := f.Row.jsonbValue(v[n:], ts[n:])
			if err != nil {
				return nil, 0, err
			}
			val, n = sub, n+m
		} else {
			var err error
			if val, err = DatumToJSON(v[n], ts[n]); err != nil {
				return nil, 0, err
			}
			n++
		}
		obj.Keys = append(obj.Keys, f.Name)
		obj.Vals = append(obj.Vals, val)
	}
	return obj, n, nil
}

// argTypeNames lists the types of args as PostgreSQL's errors do.
func argTypeNames(args []Expr) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Type().String()
	}
	return strings.Join(names, ", ")
}
