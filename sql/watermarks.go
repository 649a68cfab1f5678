package sql

import (
	"streamdb/catalog"
	"streamdb/types"
)

// watermarkColumns are the columns of the system table streamdb_watermarks:
// for each view reading a stream declared WITH WATERMARK, the watermark
// its reader has reached and how many late rows it dropped.
var watermarkColumns = []types.Column{
	{Name: "view", Type: types.Text}, {Name: "stream", Type: types.Text},
	{Name: "watermark", Type: types.Timestamp}, {Name: "late_rows", Type: types.Int8},
}

func (e *Engine) watermarkTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableWatermarks, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(watermarkColumns)}
	return d, func() []types.Row {
		var rows []types.Row
		for _, w := range e.rt.Watermarks() {
			wm := types.Null
			if w.Valid {
				wm = types.NewTimestamp2000(w.Watermark)
			}
			rows = append(rows, types.Row{types.NewString(w.View), types.NewString(w.Stream), wm, types.NewInt(int64(w.LateRows))})
		}
		return rows
	}
}
