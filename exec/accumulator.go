package exec

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// Accumulator is the running state of one aggregate call for one group.
// Every accumulator takes retractions, so that results stay exact when the
// input deletes rows; the append-only min/max variants exist because they
// need no multiset when nothing is ever retracted.
type Accumulator interface {
	// Add applies one input value with weight +1 (insert) or -1 (delete).
	Add(v types.Datum, sign int64) error
	// Result is the aggregate's current value.
	Result() types.Datum
	// Marshal appends the state to buf; Unmarshal restores it.
	Marshal(buf []byte) []byte
	Unmarshal(b []byte) ([]byte, error)
}

// AggResultType is the PostgreSQL result type of fn over an argument type.
func AggResultType(fn string, arg types.Type) (types.Type, error) {
	if t, ok := keyedOrderResultType(fn); ok {
		return t, nil
	}
	if t, ok := orderedSetResultType(fn, arg); ok {
		return t, nil
	}
	if isStatsAgg(fn) {
		if t, ok := statsResultType(arg); ok {
			return t, nil
		}
		return types.Unknown, fmt.Errorf("function %s(%s) does not exist", fn, arg)
	}
	switch fn {
	case "count":
		return types.Int8, nil
	case "min", "max":
		if arg == types.Varchar {
			return types.Text, nil // min(text) is the aggregate that applies
		}
		if arg == types.UUID {
			break // PostgreSQL 15 has no min(uuid) or max(uuid)
		}
		return arg, nil
	case "sum":
		switch arg {
		case types.Int2, types.Int4:
			return types.Int8, nil
		case types.Int8, types.Numeric:
			return types.Numeric, nil
		case types.Float4, types.Float8:
			return arg, nil
		case types.Interval:
			return types.Interval, nil
		}
	case "avg":
		switch {
		case arg.IsInteger() || arg == types.Numeric:
			return types.Numeric, nil
		case arg == types.Float4 || arg == types.Float8:
			return types.Float8, nil
		case arg == types.Interval:
			return types.Interval, nil
		}
	case "bool_and", "bool_or":
		if arg == types.Bool {
			return types.Bool, nil
		}
	}
	return types.Unknown, fmt.Errorf("function %s(%s) does not exist", fn, arg)
}

// NewAccumulator creates the state for call, as views created now keep
// it. appendOnly promises that Add will never see a retraction.
func NewAccumulator(call plan.AggCall, appendOnly bool) Accumulator {
	return newAccumulator(call, appendOnly, catalog.DataflowLatest)
}

// newAccumulator creates the state for call in a view of layout dataflow
// (catalog.Dataflow*), which fixes how sums encode their state. Views
// older than DataflowSumSpecials are no longer built (they are moved
// forward at start, or refused): that layout is read only by the
// migration (migrate_sum.go), and written by its tests.
func newAccumulator(call plan.AggCall, appendOnly bool, dataflow catalog.FormatVersion) Accumulator {
	specials := dataflow >= catalog.DataflowSumSpecials
	var acc Accumulator
	argType := types.Unknown
	if call.Arg != nil {
		argType = call.Arg.Type()
	}
	switch call.Func {
	case "count":
		acc = &countAcc{star: call.Arg == nil}
	case "sum":
		acc = &sumAcc{argType: argType, resType: call.T, specials: specials}
	case "avg":
		acc = &avgAcc{sum: sumAcc{argType: argType, resType: sumTypeForAvg(argType), specials: specials}, resType: call.T}
	case "min", "max":
		if appendOnly && !call.Distinct {
			acc = &extremeAcc{max: call.Func == "max"}
		} else {
			acc = &multisetExtremeAcc{max: call.Func == "max", counts: map[string]int64{}}
		}
	case "bool_and", "bool_or":
		acc = &boolAcc{and: call.Func == "bool_and"}
	case "var_pop", "var_samp", "stddev_pop", "stddev_samp":
		acc = newStatsAcc(call.Func, call.T)
	default:
		// The ordered aggregates list each value once under DISTINCT
		// themselves: they keep the multiset of their values anyway.
		if acc = newKeyedOrderAcc(call.Func, call.Distinct); acc != nil {
			return acc
		}
		if acc = newOrderedSetAcc(call.Func, argType, call.Distinct); acc == nil {
			panic("exec: unknown aggregate " + call.Func)
		}
		return acc
	}
	if call.Distinct {
		return &distinctAcc{inner: acc, counts: map[string]int64{}, appendKey: keyAppender(dataflow)}
	}
	return acc
}

func sumTypeForAvg(arg types.Type) types.Type {
	switch arg {
	case types.Float4, types.Float8:
		return types.Float8
	case types.Interval:
		return types.Interval
	}
	return types.Numeric
}

// countAcc counts rows (count(*)) or non-NULL values (count(x)).
type countAcc struct {
	star bool
	n    int64
}

func (a *countAcc) Add(v types.Datum, sign int64) error {
	if a.star || !v.IsNull() {
		a.n += sign
	}
	return nil
}
func (a *countAcc) Result() types.Datum                { return types.NewInt(a.n) }
func (a *countAcc) Marshal(buf []byte) []byte          { return binary.AppendVarint(buf, a.n) }
func (a *countAcc) Unmarshal(b []byte) ([]byte, error) { return readVarint(b, &a.n) }

// extremeAcc is min or max over input that is never retracted.
type extremeAcc struct {
	max bool
	v   types.Datum
}

func (a *extremeAcc) Add(v types.Datum, sign int64) error {
	if sign < 0 {
		return fmt.Errorf("internal error: retraction reached an append-only min/max")
	}
	if v.IsNull() {
		return nil
	}
	if a.v.IsNull() {
		a.v = v
		return nil
	}
	c := types.Compare(v, a.v)
	if (a.max && c > 0) || (!a.max && c < 0) {
		a.v = v
	}
	return nil
}
func (a *extremeAcc) Result() types.Datum       { return a.v }
func (a *extremeAcc) Marshal(buf []byte) []byte { return keyenc.AppendValue(buf, a.v) }
func (a *extremeAcc) Unmarshal(b []byte) ([]byte, error) {
	var err error
	a.v, b, err = keyenc.Decode(b)
	return b, err
}

// multisetExtremeAcc keeps every value with its multiplicity, so that the
// minimum or maximum is right after any retraction.
type multisetExtremeAcc struct {
	max    bool
	counts map[string]int64
	best   *types.Datum // cached result; nil when it must be recomputed
}

func (a *multisetExtremeAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		return nil
	}
	k := string(keyenc.AppendValue(nil, v))
	n := a.counts[k] + sign
	// A count may go negative for a moment when a chunk retracts a value
	// before inserting it; it is kept so that the insertion cancels it.
	if n == 0 {
		delete(a.counts, k)
	} else {
		a.counts[k] = n
	}
	switch {
	case sign < 0 || n <= 0:
		a.best = nil
	case a.best != nil && a.best.IsNull():
		// The cached result of an empty multiset: NULL compares greater
		// than any value, so it must be replaced, not compared.
		a.best = &v
	case a.best != nil:
		if a.beats(v, k, *a.best, "") {
			a.best = &v
		}
	}
	return nil
}

// beats reports whether value v (kv its value encoding, "" to compute)
// is a better extreme than w (kw alike). Values that compare equal but
// are written differently ('1 day' and '24:00:00', 1.0 and 1.00) are
// told apart by their value encodings, smallest for min and largest for
// max, as the extrema table orders them, so the one shown does not
// depend on the order of a map.
func (a *multisetExtremeAcc) beats(v types.Datum, kv string, w types.Datum, kw string) bool {
	c := types.Compare(v, w)
	if c == 0 {
		if kv == "" {
			kv = string(keyenc.AppendValue(nil, v))
		}
		if kw == "" {
			kw = string(keyenc.AppendValue(nil, w))
		}
		c = strings.Compare(kv, kw)
	}
	return (a.max && c > 0) || (!a.max && c < 0)
}

func (a *multisetExtremeAcc) Result() types.Datum {
	if a.best != nil {
		return *a.best
	}
	best, bestKey := types.Null, ""
	for k, n := range a.counts {
		if n <= 0 {
			continue
		}
		v, _, _ := keyenc.Decode([]byte(k))
		if best.IsNull() || a.beats(v, k, best, bestKey) {
			best, bestKey = v, k
		}
	}
	a.best = &best
	return best
}

func (a *multisetExtremeAcc) Marshal(buf []byte) []byte { return marshalCounts(buf, a.counts) }
func (a *multisetExtremeAcc) Unmarshal(b []byte) ([]byte, error) {
	a.best = nil
	return unmarshalCounts(b, a.counts)
}

// boolAcc is bool_and / bool_or, kept as counts of true and false inputs.
type boolAcc struct {
	and         bool
	trues, fals int64
}

func (a *boolAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		return nil
	}
	if v.Bool() {
		a.trues += sign
	} else {
		a.fals += sign
	}
	return nil
}
func (a *boolAcc) Result() types.Datum {
	if a.trues+a.fals == 0 {
		return types.Null
	}
	if a.and {
		return types.NewBool(a.fals == 0)
	}
	return types.NewBool(a.trues > 0)
}
func (a *boolAcc) Marshal(buf []byte) []byte {
	return binary.AppendVarint(binary.AppendVarint(buf, a.trues), a.fals)
}
func (a *boolAcc) Unmarshal(b []byte) ([]byte, error) {
	b, err := readVarint(b, &a.trues)
	if err != nil {
		return nil, err
	}
	return readVarint(b, &a.fals)
}

// distinctAcc feeds its inner accumulator each distinct value once: when a
// value's multiplicity goes from 0 to 1 (add) or from 1 to 0 (retract).
type distinctAcc struct {
	inner  Accumulator
	counts map[string]int64
	// appendKey tells equal values (keyAppender): '1 day' and '24:00:00'
	// are one value from catalog.DataflowIntervalSpans on.
	appendKey func([]byte, types.Datum) []byte
}

func (a *distinctAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		return nil
	}
	k := string(a.appendKey(nil, v))
	before := a.counts[k]
	after := before + sign
	if after == 0 { // negative counts are kept, as in multisetExtremeAcc
		delete(a.counts, k)
	} else {
		a.counts[k] = after
	}
	switch {
	case before <= 0 && after > 0:
		return a.inner.Add(v, 1)
	case before > 0 && after <= 0:
		return a.inner.Add(v, -1)
	}
	return nil
}
func (a *distinctAcc) Result() types.Datum { return a.inner.Result() }
func (a *distinctAcc) Marshal(buf []byte) []byte {
	return a.inner.Marshal(marshalCounts(buf, a.counts))
}
func (a *distinctAcc) Unmarshal(b []byte) ([]byte, error) {
	b, err := unmarshalCounts(b, a.counts)
	if err != nil {
		return nil, err
	}
	return a.inner.Unmarshal(b)
}

// marshalCounts writes a multiset in key order, so equal states encode
// equally.
func marshalCounts(buf []byte, m map[string]int64) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	buf = binary.AppendUvarint(buf, uint64(len(keys)))
	for _, k := range keys {
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		buf = binary.AppendVarint(buf, m[k])
	}
	return buf
}

func unmarshalCounts(b []byte, m map[string]int64) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, fmt.Errorf("multiset state truncated")
	}
	b = b[k:]
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, fmt.Errorf("multiset state truncated")
		}
		key := string(b[k : k+int(l)])
		b = b[k+int(l):]
		var c int64
		var err error
		if b, err = readVarint(b, &c); err != nil {
			return nil, err
		}
		m[key] = c
	}
	return b, nil
}

func readVarint(b []byte, out *int64) ([]byte, error) {
	v, k := binary.Varint(b)
	if k <= 0 {
		return nil, fmt.Errorf("aggregate state truncated")
	}
	*out = v
	return b[k:], nil
}
