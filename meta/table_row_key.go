package meta

import (
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// RowKey is a row's identity in a table: its primary key (the columns
// key lists) in key encoding, so that equal keys match as the state
// table matches them, or, for a table without a primary key (key nil),
// the exact value encoding of the whole row.
func RowKey(key []int, r types.Row) []byte {
	if key == nil {
		return keyenc.AppendRowValue(nil, r)
	}
	var b []byte
	for _, k := range key {
		b = keyenc.Append(b, r[k])
	}
	return b
}
