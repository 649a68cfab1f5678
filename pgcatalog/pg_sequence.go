package pgcatalog

import (
	"strconv"

	"streamdb/types"
)

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

// pg_sequences and information_schema.sequences.
func init() {
	register("pg_catalog.pg_sequence", SequenceColumns, SequenceRows)
	register("pg_catalog.pg_sequences", cols("schemaname", types.Text, "sequencename", types.Text, "sequenceowner", types.Text,
		"data_type", types.Text, "start_value", types.Int8, "min_value", types.Int8, "max_value", types.Int8,
		"increment_by", types.Int8, "cycle", types.Bool, "cache_size", types.Int8, "last_value", types.Int8),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, q := range e.Sequences() {
				last := types.Null
				if v, ok := e.SequenceLastValue(q.OID); ok {
					last = intD(v)
				}
				rows = append(rows, types.Row{str("public"), str(q.Name), str(q.Owner), str(q.Type),
					intD(q.Start), intD(q.Min), intD(q.Max), intD(q.Increment), b(q.Cycle),
					intD(q.Cache), last})
			}
			return rows
		})
	register("information_schema.sequences", cols("sequence_catalog", types.Text, "sequence_schema", types.Text, "sequence_name", types.Text,
		"data_type", types.Text, "numeric_precision", types.Int4, "numeric_precision_radix", types.Int4,
		"numeric_scale", types.Int4, "start_value", types.Text, "minimum_value", types.Text,
		"maximum_value", types.Text, "increment", types.Text, "cycle_option", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, q := range e.Sequences() {
				prec := map[string]int64{"smallint": 16, "integer": 32, "bigint": 64}[q.Type]
				rows = append(rows, types.Row{str(infoSchemaCatalog), str("public"), str(q.Name), str(q.Type),
					intD(prec), intD(2), intD(0), str(strconv.FormatInt(q.Start, 10)), str(strconv.FormatInt(q.Min, 10)),
					str(strconv.FormatInt(q.Max, 10)), str(strconv.FormatInt(q.Increment, 10)), yesNo(q.Cycle)})
			}
			return rows
		})
}
