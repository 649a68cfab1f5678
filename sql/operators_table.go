package sql

import (
	"slices"
	"strconv"
	"strings"

	"streamdb/catalog"
	"streamdb/types"
)

// streamdb_operators lists the operators of every running view's dataflow
// with what they sent downstream and their state: the figures behind the
// console's per-operator view and streamdb_operator_rows_out_total.
// rows_per_second is measured over the last second or more of epochs;
// state_tables are the operator's tables in streamdb_state, and
// state_bytes Pebble's estimate of their size on disk (cheap to read over
// any state size, unlike streamdb_state's exact count); cache_hits and
// cache_reads count the lookups of the operator's cache over Pebble that
// memory answered and that read Pebble (NULL without such a cache).

var operatorColumns = []types.Column{
	{Name: "view", Type: types.Text},
	{Name: "operator", Type: types.Text},
	{Name: "kind", Type: types.Text},
	{Name: "rows_out", Type: types.Int8},
	{Name: "rows_per_second", Type: types.Float8},
	{Name: "state_tables", Type: types.Text},
	{Name: "state_bytes", Type: types.Int8},
	{Name: "cache_hits", Type: types.Int8},
	{Name: "cache_reads", Type: types.Int8},
}

func (e *Engine) operatorsTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableOperators, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(operatorColumns)}
	return d, func() []types.Row {
		var rows []types.Row
		for _, st := range e.rt.OperatorStats() {
			tables, bytes := types.Null, types.Null
			if len(st.StateTables) > 0 {
				idx := slices.Clone(st.StateTables)
				slices.Sort(idx)
				parts := make([]string, len(idx))
				var n int64
				for i, t := range idx {
					parts[i] = strconv.Itoa(int(t))
					n += e.stateTableBytes(st.ViewID, t)
				}
				tables, bytes = types.NewString(strings.Join(parts, ",")), types.NewInt(n)
			}
			hits, reads := types.Null, types.Null
			if st.Cached {
				hits, reads = types.NewInt(st.CacheHits), types.NewInt(st.CacheReads)
			}
			rows = append(rows, types.Row{types.NewString(st.View), types.NewString(st.Operator), types.NewString(st.Kind),
				types.NewInt(st.RowsOut), types.NewFloat(st.RowsPerSec), tables, bytes, hits, reads})
		}
		return rows
	}
}

// stateTableBytes is Pebble's estimate of the disk size of state table t
// of object obj (0 if it cannot tell).
func (e *Engine) stateTableBytes(obj uint32, t uint16) int64 { return e.state.TableBytes(obj, t) }
