package sql

import (
	"context"
	"time"

	"streamdb/catalog"
	"streamdb/types"
)

// A sequence read as a relation; the catalogs of sequences are
// pgcatalog's (pg_sequence.go), pg_get_serial_sequence is
// pgcatalog/rewrite's (sequences.go).

// infoSequenceTimeout bounds reading a sequence's record for pg_sequences
// and SELECT * FROM seq.
const infoSequenceTimeout = 5 * time.Second

// sequenceReader is a catalog that reads a sequence as a relation
// (SELECT * FROM seq), as PostgreSQL shows it: last_value, log_cnt,
// is_called.
type sequenceReader interface {
	sequenceTable(d *catalog.Descriptor) (*catalog.Descriptor, func() []types.Row)
}

var sequenceTableColumns = []types.Column{{Name: "last_value", Type: types.Int8}, {Name: "log_cnt", Type: types.Int8},
	{Name: "is_called", Type: types.Bool}}

// sequenceTable is the one row of a sequence read as a relation. log_cnt
// (PostgreSQL's count of values logged ahead) is always 0: the values
// reserved ahead are not part of the catalog.
func (e *Engine) sequenceTable(d *catalog.Descriptor) (*catalog.Descriptor, func() []types.Row) {
	t := &catalog.Descriptor{Name: d.Name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(sequenceTableColumns)}
	return t, func() []types.Row {
		ctx, cancel := context.WithTimeout(context.Background(), infoSequenceTimeout)
		defer cancel()
		last, called, err := e.lastValue(ctx, d)
		if err != nil || !called {
			last = d.Sequence.Start
		}
		return []types.Row{{intD(last), intD(0), types.NewBool(called)}}
	}
}
