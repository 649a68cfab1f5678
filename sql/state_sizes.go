package sql

import (
	"streamdb/catalog"
	"streamdb/types"
)

// streamdb_state lists each view's and table's state tables with their
// size: state table 0 is the object's own rows, the others belong to its
// operators in the order the dataflow builds them, and 65535 is the
// record of rows that failed inside the view (meta.State.Sizes). Past a
// million keys a state table's keys are NULL and its bytes Pebble's
// estimate of its size on disk.

var stateColumns = []types.Column{
	{Name: "object", Type: types.Text},
	{Name: "kind", Type: types.Text},
	{Name: "state_table", Type: types.Int4},
	{Name: "keys", Type: types.Int8},
	{Name: "bytes", Type: types.Int8},
}

func (e *Engine) stateTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableState, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(stateColumns)}
	return d, func() []types.Row {
		var rows []types.Row
		for _, kind := range []catalog.ObjectKind{catalog.KindView, catalog.KindTable} {
			for _, obj := range e.objects(kind) {
				for _, s := range e.state.Sizes(obj.ID) {
					keys := types.Null
					if s.Exact {
						keys = types.NewInt(s.Keys)
					}
					rows = append(rows, types.Row{types.NewString(obj.Name), types.NewString(kindName(kind)),
						types.NewInt(int64(s.Table)), keys, types.NewInt(s.Bytes)})
				}
			}
		}
		return rows
	}
}

func kindName(k catalog.ObjectKind) string {
	if k == catalog.KindTable {
		return "table"
	}
	return "materialized view"
}
