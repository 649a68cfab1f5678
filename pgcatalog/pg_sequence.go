package pgcatalog

import "streamdb/types"

// SequenceColumns are pg_sequence's columns.
var SequenceColumns = cols("seqrelid", types.Int8, "seqtypid", types.Int8, "seqstart", types.Int8, "seqincrement", types.Int8,
	"seqmax", types.Int8, "seqmin", types.Int8, "seqcache", types.Int8, "seqcycle", types.Bool)

// SequenceRows are pg_sequence's rows: one per sequence of e, its type
// as a pg_type OID (int2, int4 or int8).
func SequenceRows(e Engine) []types.Row {
	var rows []types.Row
	for _, q := range e.Sequences() {
		typ := map[string]int64{"smallint": 21, "integer": 23}[q.Type]
		if typ == 0 {
			typ = 20
		}
		rows = append(rows, types.Row{i(q.OID), i(typ), i(q.Start), i(q.Increment), i(q.Max), i(q.Min), i(q.Cache),
			types.NewBool(q.Cycle)})
	}
	return rows
}
