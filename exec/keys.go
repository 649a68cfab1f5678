package exec

import (
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// The keys ad-hoc runners build over datums (the memo of a correlated
// subquery or LATERAL, the rows a set operation or a recursive CTE has
// seen), so that the frontend need not reach the storage encoding.

// AppendKey appends d's stored key encoding to buf: two datums give
// equal bytes exactly when they would be one key of a stored table (a
// primary key, a view's group).
func AppendKey(buf []byte, d types.Datum) []byte { return keyenc.Append(buf, d) }

// AppendCmpKey appends d's comparison key to buf: two datums give equal
// bytes exactly when they compare equal (DISTINCT, UNION, INTERSECT and
// EXCEPT; intervals by their span).
func AppendCmpKey(buf []byte, d types.Datum) []byte { return keyenc.AppendCmp(buf, d) }

// SameRowValues reports whether rows a and b hold the same values as
// they would be stored (the float -0 is not 0, a jsonb's text is kept):
// nil is only the same as nil.
func SameRowValues(a, b types.Row) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return string(keyenc.AppendRowValue(nil, a)) == string(keyenc.AppendRowValue(nil, b))
}
