package exec

import (
	"streamdb/catalog"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// keyAppender is how a view of format dataflow encodes the values of
// state keys that group, match or order them (group keys, join keys,
// top-N partitions and sort keys, min/max values, DISTINCT arguments):
// from DataflowIntervalSpans on as PostgreSQL compares them, an interval
// by its span (keyenc.AppendCmp), before it by keyenc.Append, which keeps
// '1 day' and '24:00:00' apart.
func keyAppender(dataflow catalog.FormatVersion) func([]byte, types.Datum) []byte {
	if dataflow >= catalog.DataflowIntervalSpans {
		return keyenc.AppendCmp
	}
	return keyenc.Append
}
