package exec

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"strings"

	"streamdb/expr"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// Aggregates over the sorted multiset of their input: percentile_cont,
// percentile_disc and mode (PostgreSQL's ordered-set aggregates, WITHIN
// GROUP (ORDER BY x)), and string_agg and array_agg ordered by their
// value. Each keeps every non-NULL value with its multiplicity, so it is
// exact under retraction; array_agg also counts its NULLs, which it lists
// last (first when descending), as PostgreSQL orders NULLs. An array is
// carried as its text form (see expr/array_text.go). The binder names a call "name:asc|desc:param", param being
// the fraction or the delimiter (sql/bind_ordered_agg.go).

// OrderedSetName is the AggCall.Func of an ordered aggregate.
func OrderedSetName(name string, desc bool, param string) string {
	dir := "asc"
	if desc {
		dir = "desc"
	}
	return name + ":" + dir + ":" + param
}

// parseOrderedSet splits a name made by OrderedSetName.
func parseOrderedSet(fn string) (name string, desc bool, param string, ok bool) {
	parts := strings.SplitN(fn, ":", 3)
	if len(parts) != 3 || strings.HasPrefix(parts[1], "by ") {
		return "", false, "", false
	}
	switch parts[0] {
	case "percentile_cont", "percentile_disc", "mode", "string_agg", "array_agg", "jsonb_agg", "jsonb_object_agg", "json_agg", "json_object_agg":
		return parts[0], parts[1] == "desc", parts[2], true
	}
	return "", false, "", false
}

// orderedSetResultType is the result type of an ordered aggregate.
func orderedSetResultType(fn string, arg types.Type) (types.Type, bool) {
	name, _, _, ok := parseOrderedSet(fn)
	if !ok {
		return types.Unknown, false
	}
	switch name {
	case "percentile_cont":
		if arg.IsNumeric() {
			return types.Float8, true
		}
		return types.Unknown, false
	case "string_agg":
		if arg.IsString() {
			return types.Text, true
		}
		return types.Unknown, false
	case "jsonb_agg", "jsonb_object_agg":
		return types.JSONB, true
	case "json_agg", "json_object_agg":
		return types.JSON, true
	case "array_agg":
		if arg == types.Unknown || arg.IsArray() {
			return types.ArrayOf(types.Text), true
		}
		return types.ArrayOf(arg), true
	}
	return arg, true
}

type orderedSetAcc struct {
	name   string
	desc   bool
	frac   float64
	delim  string
	counts map[string]int64
	nulls  int64      // array_agg only
	arg    types.Type // array_agg only: the element type
	// distinct (string_agg(DISTINCT x, ',')): the result lists each value
	// once; the state is the multiset all the same, so that retractions
	// stay exact.
	distinct bool
}

func newOrderedSetAcc(fn string, arg types.Type, distinct bool) Accumulator {
	name, desc, param, ok := parseOrderedSet(fn)
	if !ok {
		return nil
	}
	a := &orderedSetAcc{name: name, desc: desc, counts: map[string]int64{}, arg: arg, distinct: distinct}
	if name == "string_agg" {
		a.delim = param
	} else if param != "" {
		a.frac, _ = strconv.ParseFloat(param, 64)
	}
	return a
}

func (a *orderedSetAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		if keepsNulls(a.name) {
			a.nulls += sign
		}
		return nil
	}
	k := string(keyenc.AppendValue(nil, v))
	if n := a.counts[k] + sign; n == 0 {
		delete(a.counts, k)
	} else {
		a.counts[k] = n
	}
	return nil
}

// sorted is the values in the aggregate's order, each with its count.
func (a *orderedSetAcc) sorted() ([]types.Datum, []int64, int64) {
	var vals []types.Datum
	var ns []int64
	var total int64
	var keys []string
	for k, n := range a.counts {
		if n <= 0 {
			continue
		}
		v, _, _ := keyenc.Decode([]byte(k))
		keys = append(keys, k)
		vals = append(vals, v)
		ns = append(ns, n)
		total += n
	}
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool {
		c := types.Compare(vals[idx[i]], vals[idx[j]])
		if a.desc {
			c = -c
		}
		if c == 0 { // equal values written apart (1.0, 1.00): a fixed order
			return keys[idx[i]] < keys[idx[j]]
		}
		return c < 0
	})
	sv, sn := make([]types.Datum, 0, len(idx)), make([]int64, 0, len(idx))
	seen := map[string]bool{}
	for _, j := range idx {
		if a.distinct {
			k := distinctKey(vals[j])
			if seen[k] {
				total -= ns[j]
				continue
			}
			seen[k] = true
			total -= ns[j] - 1
			ns[j] = 1
		}
		sv, sn = append(sv, vals[j]), append(sn, ns[j])
	}
	return sv, sn, total
}

// nullCount is how many NULLs array_agg, jsonb_agg and json_agg list.
func (a *orderedSetAcc) nullCount() int64 {
	if a.distinct {
		return min(max(a.nulls, 0), 1)
	}
	return max(a.nulls, 0)
}

// distinctKey tells the values DISTINCT takes for one: equal values
// (1.0 and 1.00, '1 day' and '24:00:00') share their key. A json value,
// which has no equality of its own, is a json aggregate's [key, value]
// pair, compared as jsonb compares.
func distinctKey(v types.Datum) string {
	if v.K == types.KindJSON {
		if b, err := types.ParseJSONB(v.S); err == nil {
			v = b
		}
	}
	return string(keyenc.AppendCmp(nil, v))
}

// at is the value at 0-based position p of the expanded sorted values.
func at(vals []types.Datum, ns []int64, p int64) types.Datum {
	for i, n := range ns {
		if p < n {
			return vals[i]
		}
		p -= n
	}
	return vals[len(vals)-1]
}

func (a *orderedSetAcc) Result() types.Datum {
	vals, ns, total := a.sorted()
	switch a.name {
	case "array_agg":
		return a.array(vals, ns, total)
	case "jsonb_agg":
		return a.jsonbArray(vals, ns, total)
	case "jsonb_object_agg":
		return jsonbObject(vals, total)
	case "json_agg":
		return a.jsonArray(vals, ns, total)
	case "json_object_agg":
		return jsonObject(vals, ns, total)
	}
	if total == 0 {
		return types.Null
	}
	switch a.name {
	case "percentile_disc":
		// PostgreSQL: the first value whose position is at least
		// fraction * count.
		row := int64(math.Ceil(a.frac * float64(total)))
		if row < 1 {
			row = 1
		}
		return at(vals, ns, row-1)
	case "percentile_cont":
		pos := a.frac * float64(total-1)
		lo, hi := int64(math.Floor(pos)), int64(math.Ceil(pos))
		l, h := toFloat(at(vals, ns, lo)), toFloat(at(vals, ns, hi))
		if lo == hi {
			return types.NewFloat(l)
		}
		return types.NewFloat(l + (pos-float64(lo))*(h-l))
	case "mode":
		// The most frequent value; among equals, the first in order.
		best, bestN := vals[0], ns[0]
		for i := range vals {
			if ns[i] > bestN {
				best, bestN = vals[i], ns[i]
			}
		}
		return best
	case "string_agg":
		var b strings.Builder
		first := true
		for i, v := range vals {
			for range ns[i] {
				if !first {
					b.WriteString(a.delim)
				}
				first = false
				b.WriteString(v.S)
			}
		}
		return types.NewString(b.String())
	}
	return types.Null
}

// array is array_agg's result: NULL over no rows.
func (a *orderedSetAcc) array(vals []types.Datum, ns []int64, total int64) types.Datum {
	nulls := a.nullCount()
	if total+nulls == 0 {
		return types.Null
	}
	elems := make([]types.Datum, 0, total+nulls)
	addNulls := func() {
		for range nulls {
			elems = append(elems, types.Null)
		}
	}
	if a.desc {
		addNulls()
	}
	for i, v := range vals {
		s := types.NewString(types.FormatText(v, a.arg))
		for range ns[i] {
			elems = append(elems, s)
		}
	}
	if !a.desc {
		addNulls()
	}
	return types.NewString(expr.FormatTextArray(elems))
}

func toFloat(d types.Datum) float64 {
	switch d.K {
	case types.KindInt:
		return float64(d.I)
	case types.KindFloat:
		return d.F
	case types.KindDecimal:
		f, _ := d.D.Float64()
		return f
	}
	return math.NaN()
}

func (a *orderedSetAcc) Marshal(buf []byte) []byte {
	buf = marshalCounts(buf, a.counts)
	if keepsNulls(a.name) {
		buf = binary.AppendVarint(buf, a.nulls)
	}
	return buf
}

func (a *orderedSetAcc) Unmarshal(b []byte) ([]byte, error) {
	b, err := unmarshalCounts(b, a.counts)
	if err != nil || !keepsNulls(a.name) {
		return b, err
	}
	return readVarint(b, &a.nulls)
}

// jsonbArray is jsonb_agg's result: the values as jsonb (to_jsonb) in
// their order, NULLs as JSON nulls last (first when descending); NULL
// over no rows.
func (a *orderedSetAcc) jsonbArray(vals []types.Datum, ns []int64, total int64) types.Datum {
	nulls := a.nullCount()
	if total+nulls == 0 {
		return types.Null
	}
	out := &types.JSONValue{Kind: types.JSONArray}
	addNulls := func() {
		for range nulls {
			out.Elems = append(out.Elems, types.JSONNullValue())
		}
	}
	if a.desc {
		addNulls()
	}
	for i, v := range vals {
		j, err := expr.DatumToJSON(v, a.arg)
		if err != nil {
			j = types.JSONStringValue(types.FormatText(v, a.arg))
		}
		for range ns[i] {
			out.Elems = append(out.Elems, j)
		}
	}
	if !a.desc {
		addNulls()
	}
	return types.NewJSONB(out)
}

// jsonbObject is jsonb_object_agg's result from its [key, value] pairs in
// jsonb order: one member per key, the pair last in that order winning
// where a key has several values (PostgreSQL keeps the last in input
// order, which a multiset under retraction does not know); a pair whose
// key is null is left out. NULL over no rows.
func jsonbObject(vals []types.Datum, total int64) types.Datum {
	if total == 0 {
		return types.Null
	}
	out := &types.JSONValue{Kind: types.JSONObject}
	for _, v := range vals {
		pair, err := types.JSONOf(v)
		if err != nil || pair.Kind != types.JSONArray || len(pair.Elems) != 2 || pair.Elems[0].Kind == types.JSONNull {
			continue
		}
		k := pair.Elems[0]
		key := k.Str
		if k.Kind != types.JSONString {
			key = types.FormatJSON(k)
		}
		out.Keys = append(out.Keys, key)
		out.Vals = append(out.Vals, pair.Elems[1])
	}
	return types.NewJSONB(types.NormalizeJSON(out))
}
