package exec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"streamdb/types"
)

// jsonArrayToDatum reads a JSON array event field into a value of array
// type t: each element (a number, string, boolean or null) is read as the
// element type's text input reads it. Nested arrays and objects do not
// fit, as streamdb's arrays have one dimension.
func jsonArrayToDatum(raw []byte, t types.Type) (types.Datum, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var elems []any
	if err := dec.Decode(&elems); err != nil {
		return types.Null, err
	}
	parts := make([]types.Datum, len(elems))
	for i, e := range elems {
		var s string
		switch e := e.(type) {
		case nil:
			continue
		case string:
			s = e
		case json.Number:
			s = e.String()
		case bool:
			s = fmt.Sprint(e)
		default:
			return types.Null, fmt.Errorf("JSON array element %d does not fit type %s", i+1, t.Elem())
		}
		v, err := types.ParseText(s, t.Elem())
		if err != nil {
			return types.Null, err
		}
		parts[i] = types.NewString(types.FormatText(v, t.Elem()))
	}
	return types.NewString(types.FormatArray(parts)), nil
}
