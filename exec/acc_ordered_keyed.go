package exec

import (
	"sort"
	"strings"

	"streamdb/expr"
	"streamdb/types"
)

// string_agg, array_agg and jsonb_agg ordered by other expressions than
// their value, or with NULLS FIRST/LAST (string_agg(a, ',' ORDER BY b DESC
// NULLS LAST)). The argument is expr.OrderedArgFunc's packing of the sort
// keys and the value; the accumulator keeps the multiset of packed rows,
// so it is exact under retraction, and sorts them by the keys when asked
// for its result. Rows whose keys tie are ordered by their value (and
// then their packing), where PostgreSQL takes its input order: any order
// of ties is one PostgreSQL may answer, and this one does not depend on
// the order changes arrive in.
//
// The binder names a call "name:by <keys>:<value type>:<param>" (param:
// string_agg's delimiter), <keys> being one "asc|desc nulls first|last"
// per key, comma-separated (KeyedOrderName).

// KeyOrder is how an ordered aggregate sorts by one key.
type KeyOrder struct {
	Desc       bool
	NullsFirst bool
}

func (k KeyOrder) String() string {
	s := "asc"
	if k.Desc {
		s = "desc"
	}
	if k.NullsFirst {
		return s + " nulls first"
	}
	return s + " nulls last"
}

// KeyedOrderName is the AggCall.Func of an aggregate ordered by keys.
func KeyedOrderName(name string, keys []KeyOrder, elem types.Type, param string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.String()
	}
	return name + ":by " + strings.Join(parts, ",") + ":" + elem.String() + ":" + param
}

// parseKeyedOrder splits a name made by KeyedOrderName.
func parseKeyedOrder(fn string) (name string, keys []KeyOrder, elem types.Type, param string, ok bool) {
	parts := strings.SplitN(fn, ":", 4)
	if len(parts) != 4 || !strings.HasPrefix(parts[1], "by ") {
		return "", nil, types.Unknown, "", false
	}
	switch parts[0] {
	case "string_agg", "array_agg", "jsonb_agg", "json_agg", "jsonb_object_agg", "json_object_agg":
	default:
		return "", nil, types.Unknown, "", false
	}
	for _, k := range strings.Split(strings.TrimPrefix(parts[1], "by "), ",") {
		var o KeyOrder
		switch k {
		case "asc nulls last":
		case "asc nulls first":
			o.NullsFirst = true
		case "desc nulls last":
			o.Desc = true
		case "desc nulls first":
			o.Desc, o.NullsFirst = true, true
		default:
			return "", nil, types.Unknown, "", false
		}
		keys = append(keys, o)
	}
	elem, err := types.Parse(parts[2])
	if err != nil || elem.String() != parts[2] {
		return "", nil, types.Unknown, "", false
	}
	return parts[0], keys, elem, parts[3], true
}

// keyedOrderResultType is the result type of an aggregate ordered by keys.
func keyedOrderResultType(fn string) (types.Type, bool) {
	name, _, elem, _, ok := parseKeyedOrder(fn)
	if !ok {
		return types.Unknown, false
	}
	switch name {
	case "string_agg":
		if elem.IsString() {
			return types.Text, true
		}
		return types.Unknown, false
	case "jsonb_agg", "jsonb_object_agg":
		return types.JSONB, true
	case "json_agg", "json_object_agg":
		return types.JSON, true
	}
	if elem == types.Unknown || elem.IsArray() {
		return types.ArrayOf(types.Text), true
	}
	return types.ArrayOf(elem), true
}

type keyedOrderAcc struct {
	name   string
	keys   []KeyOrder
	elem   types.Type
	delim  string
	counts map[string]int64 // packed rows (keys, then value)
	// distinct: the result lists each value once. Its ORDER BY keys are
	// among its arguments (the binder checks), so equal values sort
	// together.
	distinct bool
}

func newKeyedOrderAcc(fn string, distinct bool) Accumulator {
	name, keys, elem, param, ok := parseKeyedOrder(fn)
	if !ok {
		return nil
	}
	return &keyedOrderAcc{name: name, keys: keys, elem: elem, delim: param, counts: map[string]int64{}, distinct: distinct}
}

// Add takes a packed row; NULL is a row a FILTER left out.
func (a *keyedOrderAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		return nil
	}
	k := v.S
	if n := a.counts[k] + sign; n == 0 {
		delete(a.counts, k)
	} else {
		a.counts[k] = n
	}
	return nil
}

type keyedRow struct {
	packed string
	row    []types.Datum
	n      int64
}

// sorted is the packed rows in the aggregate's order, unpacked.
func (a *keyedOrderAcc) sorted() []keyedRow {
	rows := make([]keyedRow, 0, len(a.counts))
	for k, n := range a.counts {
		if n <= 0 {
			continue
		}
		row, err := expr.UnpackOrderedArg([]byte(k))
		if err != nil || len(row) != len(a.keys)+1 {
			continue
		}
		rows = append(rows, keyedRow{packed: k, row: row, n: n})
	}
	sort.Slice(rows, func(i, j int) bool {
		x, y := rows[i].row, rows[j].row
		for c, o := range a.keys {
			xn, yn := x[c].IsNull(), y[c].IsNull()
			switch {
			case xn && yn:
				continue
			case xn || yn:
				return xn == o.NullsFirst
			}
			cmp := types.Compare(x[c], y[c])
			if o.Desc {
				cmp = -cmp
			}
			if cmp != 0 {
				return cmp < 0
			}
		}
		if cmp := types.Compare(x[len(x)-1], y[len(y)-1]); cmp != 0 {
			return cmp < 0
		}
		return rows[i].packed < rows[j].packed
	})
	if a.distinct {
		rows = distinctRows(rows)
	}
	return rows
}

// distinctRows keeps the first of each run of sorted rows whose values
// are equal (distinctKey), once.
func distinctRows(rows []keyedRow) []keyedRow {
	out := rows[:0]
	prev := ""
	for i, r := range rows {
		k := distinctKey(r.row[len(r.row)-1])
		if i > 0 && k == prev {
			continue
		}
		prev = k
		r.n = 1
		out = append(out, r)
	}
	return out
}

func (a *keyedOrderAcc) Result() types.Datum {
	rows := a.sorted()
	switch a.name {
	case "string_agg":
		var b strings.Builder
		some := false
		for _, r := range rows {
			v := r.row[len(r.row)-1]
			if v.IsNull() {
				continue
			}
			for range r.n {
				if some {
					b.WriteString(a.delim)
				}
				some = true
				b.WriteString(v.S)
			}
		}
		if !some {
			return types.Null
		}
		return types.NewString(b.String())
	case "jsonb_agg":
		if len(rows) == 0 {
			return types.Null
		}
		out := &types.JSONValue{Kind: types.JSONArray}
		for _, r := range rows {
			v := r.row[len(r.row)-1]
			j := types.JSONNullValue()
			if !v.IsNull() {
				var err error
				if j, err = expr.DatumToJSON(v, a.elem); err != nil {
					j = types.JSONStringValue(types.FormatText(v, a.elem))
				}
			}
			for range r.n {
				out.Elems = append(out.Elems, j)
			}
		}
		return types.NewJSONB(out)
	case "jsonb_object_agg", "json_object_agg":
		vals, ns := make([]types.Datum, 0, len(rows)), make([]int64, 0, len(rows))
		var total int64
		for _, r := range rows {
			if v := r.row[len(r.row)-1]; !v.IsNull() {
				vals, ns = append(vals, v), append(ns, r.n)
				total += r.n
			}
		}
		if a.name == "jsonb_object_agg" {
			return jsonbObject(vals, total)
		}
		return jsonObject(vals, ns, total)
	case "json_agg":
		if len(rows) == 0 {
			return types.Null
		}
		var b strings.Builder
		b.WriteByte('[')
		for i, r := range rows {
			v := r.row[len(r.row)-1]
			for k := range r.n {
				if i > 0 || k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(jsonElemText(v, a.elem))
			}
		}
		b.WriteByte(']')
		return types.NewJSONText(b.String())
	}
	if len(rows) == 0 {
		return types.Null
	}
	var elems []types.Datum
	for _, r := range rows {
		v := r.row[len(r.row)-1]
		e := types.Null
		if !v.IsNull() {
			e = types.NewString(types.FormatText(v, a.elem))
		}
		for range r.n {
			elems = append(elems, e)
		}
	}
	return types.NewString(expr.FormatTextArray(elems))
}

func (a *keyedOrderAcc) Marshal(buf []byte) []byte { return marshalCounts(buf, a.counts) }

func (a *keyedOrderAcc) Unmarshal(b []byte) ([]byte, error) { return unmarshalCounts(b, a.counts) }
