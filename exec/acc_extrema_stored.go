package exec

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// min and max over a retracting input, from catalog.DataflowExtremaByValue
// on: the multiset of values lives in a second state table of the
// aggregate (extremaTable), one key per distinct value,
//
//	prefix + group key + call index + keyenc.Append(v) + keyenc.AppendValue(v) -> varint count
//
// (from catalog.DataflowVNodeKeys on, the vnode of the group key after
// prefix, as in the groups' table: a group's values lie with its group)
// so a group's values lie in value order and its minimum (first key) or
// maximum (last key) is one seek. The accumulator keeps only the current
// extreme and its count: a group costs the same memory with ten values or
// ten million, and writing a group rewrites only the values that changed,
// not the whole multiset. The extreme is looked up again when it is
// retracted away, when a value that would beat it arrives (its stored
// count is not known), and after the group is read back from Pebble.
// The second keyenc part keeps what Append folds (1.50 against 1.5, -0
// against 0), so that the result prints as the value that was added.

// extremaTable is an aggregate's table of min/max multisets. Changes of an
// epoch are kept in delta until the barrier writes them; written counts
// stay in over until Pebble has committed them, and every read of Pebble
// sees through both (as topNCache does).
type extremaTable struct {
	store  *storage.Store
	prefix []byte
	// vnodes is the view's vnode count when keys carry the vnode of
	// their group key (partKey); 0: none.
	vnodes    int
	committed func() uint64
	miss      missRule // values that may be in Pebble
	delta     map[string]map[string]int64
	over      map[string]map[string]*overWrite
	reads     uint64
	// err is a failed read of Pebble while computing a result, which
	// Accumulator.Result cannot return: the barrier's flush returns it,
	// so the view stops instead of storing a wrong result.
	err error
	// appendKey encodes a value's order (keyAppender); nil:
	// keyenc.Append.
	appendKey func([]byte, types.Datum) []byte
}

func newExtremaTable(store *storage.Store, prefix []byte, vnodes int, committed func() uint64) (*extremaTable, error) {
	t := &extremaTable{store: store, prefix: prefix, vnodes: vnodes, committed: committed,
		delta: map[string]map[string]int64{}, over: map[string]map[string]*overWrite{}}
	var err error
	t.miss, err = newMissRule(store.DB(), prefix)
	return t, err
}

// storedExtremeAcc is min or max over a retracting input, its multiset in
// an extremaTable under part (the group key and the call's index).
type storedExtremeAcc struct {
	max   bool
	t     *extremaTable
	part  string
	known bool // best and bestN are the extreme and its count
	best  string
	bestN int64
}

// valueKey is the key suffix of v in a multiset: its order, then what
// prints (equal values written differently are different keys, side by
// side).
func (t *extremaTable) valueKey(v types.Datum) string {
	if t.appendKey == nil {
		return string(keyenc.AppendValue(keyenc.Append(nil, v), v))
	}
	return string(keyenc.AppendValue(t.appendKey(nil, v), v))
}

// beats reports whether key a is a better extreme than b.
func (a *storedExtremeAcc) beats(x, y string) bool {
	if a.max {
		return x > y
	}
	return x < y
}

func (a *storedExtremeAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		return nil
	}
	k := a.t.valueKey(v)
	a.t.add(a.part, k, sign)
	if !a.known {
		return nil
	}
	switch {
	case a.bestN <= 0:
		a.known = false // was empty
	case k == a.best:
		a.bestN += sign
		if a.bestN <= 0 {
			a.known = false
		}
	case a.beats(k, a.best) || (v.K == types.KindDecimal && sameOrderPrefix(k, a.best)):
		a.known = false
	}
	return nil
}

func (a *storedExtremeAcc) Result() types.Datum {
	if !a.known {
		k, n, err := a.t.extreme(a.part, a.max)
		if err != nil {
			a.t.err = err
			return types.Null
		}
		a.best, a.bestN, a.known = k, n, true
	}
	if a.bestN <= 0 {
		return types.Null
	}
	_, rest, err := keyenc.Decode([]byte(a.best))
	if err != nil {
		return types.Null
	}
	v, _, err := keyenc.Decode(rest)
	if err != nil {
		return types.Null
	}
	return v
}

// Marshal stores nothing: the values are in the extrema table.
func (a *storedExtremeAcc) Marshal(buf []byte) []byte          { return buf }
func (a *storedExtremeAcc) Unmarshal(b []byte) ([]byte, error) { return b, nil }

// add records a change of value k's count in part.
func (t *extremaTable) add(part, k string, sign int64) {
	m := t.delta[part]
	if m == nil {
		m = map[string]int64{}
		t.delta[part] = m
	}
	m[k] += sign
}

// base is the count of k in part before this epoch's changes.
func (t *extremaTable) base(part, k string) (int64, error) {
	if w, ok := t.over[part][k]; ok {
		return w.count, nil
	}
	if !t.miss.mustRead(part + k) {
		return 0, nil
	}
	t.reads++
	v, found, err := t.store.Get(append(t.partKey(nil, part), k...))
	if err != nil || !found {
		return 0, err
	}
	var n int64
	_, err = readVarint(v, &n)
	return n, err
}

// extreme returns part's least (or, with max, greatest) value key whose
// count is positive, and that count; n is 0 when part holds none.
func (t *extremaTable) extreme(part string, max bool) (string, int64, error) {
	// Keys changed but not committed, best first: the first with a
	// positive count is their best.
	var changed []string
	for k := range t.over[part] {
		changed = append(changed, k)
	}
	for k := range t.delta[part] {
		if _, ok := t.over[part][k]; !ok {
			changed = append(changed, k)
		}
	}
	sort.Slice(changed, func(i, j int) bool {
		if max {
			return changed[i] > changed[j]
		}
		return changed[i] < changed[j]
	})
	var best string
	var bestN int64
	for _, k := range changed {
		n, err := t.base(part, k)
		if err != nil {
			return "", 0, err
		}
		if n += t.delta[part][k]; n > 0 {
			best, bestN = k, n
			break
		}
	}
	// The best committed key that no change touched.
	t.reads++
	base := t.partKey(nil, part)
	it, err := t.store.DB().NewIter(&pebble.IterOptions{LowerBound: base, UpperBound: storage.PrefixEnd(base)})
	if err != nil {
		return "", 0, err
	}
	defer it.Close()
	step := it.Next
	valid := it.First()
	if max {
		step, valid = it.Prev, it.Last()
	}
	for ; valid; valid = step() {
		k := string(it.Key()[len(base):])
		if bestN > 0 && (k == best || (max && k < best) || (!max && k > best)) {
			break // no better key remains
		}
		if _, ok := t.over[part][k]; ok {
			continue
		}
		if _, ok := t.delta[part][k]; ok {
			continue
		}
		var n int64
		if _, err := readVarint(it.Value(), &n); err != nil {
			return "", 0, fmt.Errorf("min/max state: %w", err)
		}
		if n > 0 {
			best, bestN = k, n
			break
		}
	}
	if err := it.Error(); err != nil {
		return "", 0, err
	}
	return t.exactDecimal(part, best, bestN, max)
}

// decimalPrefixLen is the part of a numeric's key that orders it: the tag
// and the float64 prefix (keyenc); the text after it does not order.
const decimalPrefixLen = 9

// sameOrderPrefix reports whether keys a and b of numerics share the float
// prefix, so that their byte order says nothing about their order.
func sameOrderPrefix(a, b string) bool {
	return len(a) >= decimalPrefixLen && len(b) >= decimalPrefixLen && a[:decimalPrefixLen] == b[:decimalPrefixLen]
}

// exactDecimal makes extreme exact for numerics: keys order numerics by a
// float64 prefix only, so when the best key is a numeric, every value with
// a positive count under the same prefix is compared by value.
func (t *extremaTable) exactDecimal(part, best string, bestN int64, max bool) (string, int64, error) {
	if bestN <= 0 || len(best) < decimalPrefixLen {
		return best, bestN, nil
	}
	if d, _, err := keyenc.Decode([]byte(best)); err != nil || d.K != types.KindDecimal {
		return best, bestN, nil
	}
	better := func(k string) bool {
		x, _, err1 := keyenc.Decode([]byte(k))
		y, _, err2 := keyenc.Decode([]byte(best))
		if err1 != nil || err2 != nil {
			return false
		}
		c := types.Compare(x, y)
		return (max && c > 0) || (!max && c < 0)
	}
	prefix := best[:decimalPrefixLen]
	consider := func(k string, n int64) {
		if n > 0 && k != best && strings.HasPrefix(k, prefix) && better(k) {
			best, bestN = k, n
		}
	}
	seen := map[string]bool{} // changed keys: their counts come from base and delta
	for k := range t.delta[part] {
		seen[k] = true
	}
	for k := range t.over[part] {
		seen[k] = true
	}
	for k := range seen {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		n, err := t.base(part, k)
		if err != nil {
			return "", 0, err
		}
		consider(k, n+t.delta[part][k])
	}
	lo := append(t.partKey(nil, part), prefix...)
	it, err := t.store.DB().NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: storage.PrefixEnd(lo)})
	if err != nil {
		return "", 0, err
	}
	defer it.Close()
	base := len(lo) - len(prefix)
	for valid := it.First(); valid; valid = it.Next() {
		k := string(it.Key()[base:])
		if seen[k] {
			continue
		}
		var n int64
		if _, err := readVarint(it.Value(), &n); err != nil {
			return "", 0, fmt.Errorf("min/max state: %w", err)
		}
		consider(k, n)
	}
	return best, bestN, it.Error()
}

// flush writes the epoch's changed counts to b and keeps them in over
// until Pebble commits them; it forgets the writes Pebble has committed.
func (t *extremaTable) flush(b *pebble.Batch, epoch uint64) error {
	if t.err != nil {
		return fmt.Errorf("min/max state: %w", t.err)
	}
	committed := t.committed()
	for part, m := range t.over {
		for k, w := range m {
			if w.epoch <= committed {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			delete(t.over, part)
		}
	}
	for part, m := range t.delta {
		for k, d := range m {
			if d == 0 {
				continue
			}
			n, err := t.base(part, k)
			if err != nil {
				return err
			}
			n += d
			key := append(t.partKey(nil, part), k...)
			if n == 0 {
				err = b.Delete(key, nil)
			} else {
				err = b.Set(key, binary.AppendVarint(nil, n), nil)
			}
			if err != nil {
				return err
			}
			o := t.over[part]
			if o == nil {
				o = map[string]*overWrite{}
				t.over[part] = o
			}
			o[k] = &overWrite{count: n, epoch: epoch}
			t.miss.evictedKey(part + k)
		}
	}
	clear(t.delta)
	return nil
}

// dropGroup deletes, in b, the multisets of the group with key ks (its
// window closed), for calls calls.
func (t *extremaTable) dropGroup(b *pebble.Batch, ks string, calls int) error {
	for i := range calls {
		part := ks + string([]byte{byte(i)})
		delete(t.delta, part)
		delete(t.over, part)
	}
	p := appendVNodeKey(nil, t.prefix, t.vnodes, ks)
	return b.DeleteRange(p, storage.PrefixEnd(p), nil)
}

// partKey appends to buf the key prefix of multiset part (a group key
// and a call's index): the table's prefix, the vnode of the group key,
// part.
func (t *extremaTable) partKey(buf []byte, part string) []byte {
	buf = appendVNodeKey(buf, t.prefix, t.vnodes, part[:len(part)-1])
	return append(buf, part[len(part)-1])
}
