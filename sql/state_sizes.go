package sql

import (
	"encoding/binary"

	"streamdb/catalog"
	"streamdb/storage"
	"streamdb/types"
)

// streamdb_state lists each view's and table's state tables with their
// size: state table 0 is the object's own rows, the others belong to its
// operators in the order the dataflow builds them, and 65535 is the
// record of rows that failed inside the view.

var stateColumns = []types.Column{
	{Name: "object", Type: types.Text},
	{Name: "kind", Type: types.Text},
	{Name: "state_table", Type: types.Int4},
	{Name: "keys", Type: types.Int8},
	{Name: "bytes", Type: types.Int8},
}

// stateScanLimit bounds the keys counted per state table, so that reading
// the table stays cheap over large state; past it, keys is NULL and bytes
// is Pebble's estimate of the table's size on disk.
const stateScanLimit = 1_000_000

func (e *Engine) stateTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableState, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(stateColumns)}
	return d, func() []types.Row {
		var rows []types.Row
		for _, kind := range []catalog.ObjectKind{catalog.KindView, catalog.KindTable} {
			for _, obj := range e.objects(kind) {
				for _, s := range e.stateSizes(obj.ID) {
					keys := types.Null
					if s.exact {
						keys = types.NewInt(s.keys)
					}
					rows = append(rows, types.Row{types.NewString(obj.Name), types.NewString(kindName(kind)),
						types.NewInt(int64(s.table)), keys, types.NewInt(s.bytes)})
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

type stateSize struct {
	table uint16
	keys  int64
	bytes int64
	exact bool
}

// stateSizes measures every state table of object obj in the committed
// state (a Pebble iterator sees whole epochs).
func (e *Engine) stateSizes(obj uint32) []stateSize {
	db := e.store.DB()
	prefix := storage.ObjectStatePrefix(obj)
	it, err := db.NewIter(nil)
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []stateSize
	for valid := it.SeekGE(prefix); valid; {
		k := it.Key()
		if len(k) < len(prefix)+2 || string(k[:len(prefix)]) != string(prefix) {
			break
		}
		s := stateSize{table: binary.BigEndian.Uint16(k[len(prefix):]), exact: true}
		tablePrefix := storage.StatePrefix(obj, s.table)
		end := storage.PrefixEnd(tablePrefix)
		for valid = true; valid && string(it.Key()[:min(len(it.Key()), len(tablePrefix))]) == string(tablePrefix); valid = it.Next() {
			if s.keys == stateScanLimit {
				s.exact = false
				break
			}
			s.keys++
			s.bytes += int64(len(it.Key()) + len(it.Value()))
		}
		if !s.exact {
			if n, err := db.EstimateDiskUsage(tablePrefix, end); err == nil {
				s.bytes = int64(n)
			}
			valid = it.SeekGE(end)
		}
		out = append(out, s)
	}
	return out
}
