package exec

import (
	"bytes"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// lookupByKey runs a filter over a scan of a keyed view or table as one
// point read when the filter fixes every key column to a constant
// (WHERE auction = 42): the stored row under that key, if any, is the only
// row that can pass. It reports false when the filter does not have that
// shape; the caller then scans.
func lookupByKey(f *plan.Filter, r storage.Reader) ([]types.Row, bool, error) {
	s, ok := f.Input.(*plan.Scan)
	if !ok || s.Rows != nil {
		return nil, false, nil
	}
	keys, ok := PinnedKeys(f.Cond, s)
	if !ok {
		return nil, false, nil
	}
	out, err := readKeyedRows(r, keys, len(s.Cols), f.Cond)
	return out, true, err
}

// readKeyedRows reads the stored rows under full state keys (a key
// missing is skipped), keeps those cond holds on, each as many times as
// it is stored.
func readKeyedRows(r storage.Reader, keys [][]byte, ncols int, cond expr.Expr) ([]types.Row, error) {
	var out []types.Row
	for _, key := range keys {
		row, count, found, err := getViewRow(r, key, ncols)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if pass, err := expr.Holds(cond, row); err != nil || !pass {
			if err != nil {
				return nil, err
			}
			continue
		}
		for range count {
			out = append(out, row)
		}
	}
	return out, nil
}

// maxPinnedKeys bounds the point reads PinnedKeys turns a filter into;
// past it a scan is cheaper to reason about.
const maxPinnedKeys = 1024

// PinnedKeys returns the full stored keys (prefix, the vnode when the
// object's rows carry one, and key columns) of the rows of s that cond
// can hold for, in the order of their key columns without repeats, when
// cond fixes every column of s.StoredKey to constants: "col = c", or
// "col IN (c1, c2, ...)" (an OR of such equalities), ANDed. An empty list
// means no row can pass (a key column compared to NULL). ok is false when
// cond does not have that shape.
func PinnedKeys(cond expr.Expr, s *plan.Scan) (keys [][]byte, ok bool) {
	if len(s.StoredKey) == 0 {
		return nil, false
	}
	conj := plan.Conjuncts(cond)
	keys = [][]byte{ViewTablePrefix(s.Object.ID)}
	for _, k := range s.StoredKey {
		t := s.Cols[k].Type
		if !exactKeyType(t) {
			return nil, false
		}
		vals, ok := keyValues(conj, k, t)
		if !ok || len(keys)*len(vals) > maxPinnedKeys {
			return nil, false
		}
		next := make([][]byte, 0, len(keys)*len(vals))
		for _, key := range keys {
			for _, v := range vals {
				next = append(next, keyenc.Append(bytes.Clone(key), v))
			}
		}
		keys = next
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	if vnodes := s.Object.RowVNodes(); vnodes > 0 {
		for i, key := range keys {
			keys[i] = withRowVNode(key, len(ViewTablePrefix(s.Object.ID)), vnodes)
		}
	}
	return keys, true
}

// withRowVNode returns the stored key of a row of an object whose rows
// carry vnodes among vnodes, from key, its prefix (of length at) and the
// key the row is stored by: the vnode of that key goes between them.
func withRowVNode(key []byte, at, vnodes int) []byte {
	out := make([]byte, 0, len(key)+storage.VNodeLen)
	out = append(out, key[:at]...)
	out = storage.AppendVNode(out, storage.VNodeOf(key[at:], vnodes))
	return append(out, key[at:]...)
}

// keyValues returns the values conj fixes column col to: one conjunct
// "col = c", or one that is an OR of such equalities (col IN (...)). NULLs
// are left out (= NULL is never true).
func keyValues(conj []expr.Expr, col int, t types.Type) ([]types.Datum, bool) {
	if v, ok := keyValue(conj, col, t); ok {
		if v.IsNull() {
			return nil, true
		}
		return []types.Datum{v}, true
	}
	for _, c := range conj {
		var vals []types.Datum
		if orOfEqualities(c, col, t, &vals) {
			return vals, true
		}
	}
	return nil, false
}

// orOfEqualities reports whether e is an OR tree whose every leaf is
// "col = constant", appending the constants (NULLs left out) to vals.
func orOfEqualities(e expr.Expr, col int, t types.Type, vals *[]types.Datum) bool {
	f, ok := e.(*expr.Func)
	if !ok {
		return false
	}
	if f.Name == "OR" && len(f.Args) == 2 {
		return orOfEqualities(f.Args[0], col, t, vals) && orOfEqualities(f.Args[1], col, t, vals)
	}
	v, ok := keyValue([]expr.Expr{e}, col, t)
	if !ok {
		return false
	}
	if !v.IsNull() {
		*vals = append(*vals, v)
	}
	return true
}

// exactKeyType reports whether values of t that compare equal are stored
// alike, so that a lookup by the constant's encoding finds every equal
// value. Not so for numeric (1.5 = 1.50), floats (0 = -0) and intervals
// (1 day = 24 hours).
func exactKeyType(t types.Type) bool {
	switch {
	case t.IsInteger(), t.IsString(), t == types.Bool, t == types.Date, t == types.Timestamp, t == types.Timestamptz:
		return true
	}
	return false
}

// keyValue finds among conj a conjunct "column col = constant" and returns
// the constant as a value of the column's type t. It accepts only what
// compares exactly like the stored values: the column itself, or the
// column widened to a larger integer type, against a constant of the
// compared type that t holds unchanged.
func keyValue(conj []expr.Expr, col int, t types.Type) (types.Datum, bool) {
	for _, c := range conj {
		f, ok := c.(*expr.Func)
		if !ok || f.Name != "=" || len(f.Args) != 2 {
			continue
		}
		for i := range 2 {
			k, ok := constant(f.Args[1-i])
			if !ok || !isColumn(f.Args[i], col, t) {
				continue
			}
			if k.D.IsNull() {
				return types.Null, true
			}
			v, err := expr.CastDatum(k.D, t)
			if err != nil {
				continue
			}
			if back, err := expr.CastDatum(v, k.T); err != nil || types.Compare(back, k.D) != 0 {
				continue
			}
			return v, true
		}
	}
	return types.Null, false
}

// constant returns the value of e if e is a constant, or arithmetic sign
// or a cast applied to one (-1 binds as minus applied to 1).
func constant(e expr.Expr) (*expr.Const, bool) {
	switch x := e.(type) {
	case *expr.Const:
		return x, true
	case *expr.Func:
		if len(x.Args) != 1 || x.Lazy != nil || !(x.Name == "-" || x.Name == "+" || strings.HasPrefix(x.Name, "CAST")) {
			return nil, false
		}
		if _, ok := constant(x.Args[0]); !ok {
			return nil, false
		}
		v, err := x.Eval(nil)
		if err != nil {
			return nil, false
		}
		return &expr.Const{D: v, T: x.T}, true
	}
	return nil, false
}

// isColumn reports whether e is column col (of type t), or that column
// cast from one integer type to another.
func isColumn(e expr.Expr, col int, t types.Type) bool {
	if f, ok := e.(*expr.Func); ok && f.Name == "CAST" && len(f.Args) == 1 && f.T.IsInteger() && t.IsInteger() {
		e = f.Args[0]
	}
	c, ok := e.(*expr.ColRef)
	return ok && c.Idx == col && c.T == t
}

// getViewRow reads the stored row under key (a full key: prefix and key
// columns), with its multiplicity.
func getViewRow(r storage.Reader, key []byte, ncols int) (types.Row, uint64, bool, error) {
	upper := append(bytes.Clone(key), 0)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: key, UpperBound: upper})
	if err != nil {
		return nil, 0, false, err
	}
	defer it.Close()
	if !it.First() || !bytes.Equal(it.Key(), key) {
		return nil, 0, false, it.Error()
	}
	row, count, err := DecodeViewValue(it.Value(), ncols)
	return row, count, err == nil, err
}
