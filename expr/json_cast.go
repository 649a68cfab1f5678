package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// jsonCastable lists PostgreSQL's casts among json, jsonb and the scalar
// types (text is castable to and from everything already): json to and
// from jsonb, and jsonb to boolean and the number types.
func jsonCastable(from, to types.Type) bool {
	switch {
	case (from == types.JSON || from == types.JSONB) && (to == types.JSON || to == types.JSONB):
		return true
	case from == types.JSONB && (to == types.Bool || to.IsNumeric()):
		return true
	}
	return false
}

// castJSON converts a json or jsonb datum to t; ok is false for targets
// CastDatum handles itself (text).
func castJSON(d types.Datum, t types.Type) (types.Datum, bool, error) {
	switch t {
	case types.JSON:
		return types.NewJSONText(d.S), true, nil
	case types.JSONB:
		if d.K == types.KindJSONB {
			return d, true, nil
		}
		v, err := types.JSONBOfJSON(d.S)
		if err != nil {
			return types.Null, true, err
		}
		return types.NewJSONB(v), true, nil
	case types.Bool, types.Int2, types.Int4, types.Int8, types.Float4, types.Float8, types.Numeric:
		if d.K != types.KindJSONB {
			return types.Null, true, cannotCast(types.JSON, t)
		}
		v, err := types.JSONOf(d)
		if err != nil {
			return types.Null, true, err
		}
		want := types.JSONNumber
		if t == types.Bool {
			want = types.JSONBool
		}
		if v.Kind != want {
			return types.Null, true, sqlerr.New(sqlerr.InvalidParameterValue, "cannot cast jsonb %s to type %s", v.Kind, t)
		}
		if t == types.Bool {
			return types.NewBool(v.Bool), true, nil
		}
		r, err := CastDatum(types.NewDecimal(v.Num), t)
		return r, true, err
	}
	return types.Null, false, nil
}
