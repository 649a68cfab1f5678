package exec

import (
	stdjson "encoding/json"
	"strings"

	"streamdb/expr"
	"streamdb/types"
)

// json_agg and json_object_agg build json text as PostgreSQL writes it
// ("[1, 2]" and "{ "a" : 1, "b" : 2 }"), each value as to_json gives it
// (a json value as written), over the same multisets as jsonb_agg and
// jsonb_object_agg, so they are exact under retraction.

// keepsNulls reports whether the ordered aggregate name counts NULL
// inputs (which its result holds).
func keepsNulls(name string) bool {
	return name == "array_agg" || name == "jsonb_agg" || name == "json_agg"
}

// jsonElemText is to_json's text of v, of type t; null for NULL.
func jsonElemText(v types.Datum, t types.Type) string {
	if v.IsNull() {
		return "null"
	}
	s, err := expr.DatumToJSONText(v, t)
	if err != nil {
		return types.FormatText(v, t)
	}
	return s
}

// jsonArray is json_agg's result: the values in their order, NULLs as
// null last (first when descending); NULL over no rows.
func (a *orderedSetAcc) jsonArray(vals []types.Datum, ns []int64, total int64) types.Datum {
	nulls := a.nullCount()
	if total+nulls == 0 {
		return types.Null
	}
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	add := func(s string) {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
		n++
	}
	addNulls := func() {
		for range nulls {
			add("null")
		}
	}
	if a.desc {
		addNulls()
	}
	for i, v := range vals {
		s := jsonElemText(v, a.arg)
		for range ns[i] {
			add(s)
		}
	}
	if !a.desc {
		addNulls()
	}
	b.WriteByte(']')
	return types.NewJSONText(b.String())
}

// jsonObject is json_object_agg's result from its [key text, value]
// pairs (json text) in their order: every pair a member, a key repeated
// as often as it came, as PostgreSQL's json keeps duplicates; a pair
// whose key is null is left out. NULL over no rows.
func jsonObject(vals []types.Datum, ns []int64, total int64) types.Datum {
	if total == 0 {
		return types.Null
	}
	var b strings.Builder
	b.WriteString("{ ")
	n := 0
	for i, v := range vals {
		var pair []stdjson.RawMessage
		if err := stdjson.Unmarshal([]byte(v.S), &pair); err != nil || len(pair) != 2 || string(pair[0]) == "null" {
			continue
		}
		var key string
		if err := stdjson.Unmarshal(pair[0], &key); err != nil {
			continue
		}
		for range ns[i] {
			if n > 0 {
				b.WriteString(", ")
			}
			types.WriteJSONString(&b, key)
			b.WriteString(" : ")
			b.Write(pair[1])
			n++
		}
	}
	b.WriteString(" }")
	return types.NewJSONText(b.String())
}
