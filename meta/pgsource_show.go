package meta

import (
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/types"
)

// SHOW SOURCES and streamdb_sources list the PostgreSQL sources with
// where their appliers are: the source position the mirrored tables
// hold, and how far the source's WAL is ahead of it (0 when the source
// has sent everything and all of it is applied). applied_lsn X means
// every source transaction that ends at or before X is committed
// (acknowledged by JetStream, so a read that starts after waits for the
// epoch that holds it): the applier sets it only after the commit that
// writes X to the progress table returns.

// PGSourceColumns are the columns of SHOW SOURCES and streamdb_sources.
var PGSourceColumns = []types.Column{
	{Name: "name", Type: types.Text}, {Name: "connection", Type: types.Text},
	{Name: "publication", Type: types.Text}, {Name: "slot", Type: types.Text},
	{Name: "tables", Type: types.Text}, {Name: "status", Type: types.Text},
	{Name: "applied_lsn", Type: types.Text}, {Name: "lag_bytes", Type: types.Int8},
	{Name: "lag_seconds", Type: types.Float8},
}

// Rows are the rows of SHOW SOURCES: every source of the catalog, with
// its applier's status.
func (s *PGSources) Rows() []types.Row {
	var rows []types.Row
	for _, d := range s.cfg.Host.Objects(catalog.KindSource) {
		src := d.Source
		var tables []string
		for _, t := range src.Tables {
			tables = append(tables, t.Schema+"."+t.Name+" AS "+t.Table)
		}
		row := types.Row{types.NewString(d.Name), types.NewString(s.cfg.Host.ShownConnection(src)),
			types.NewString(src.Publication), types.NewString(src.Slot), types.NewString(strings.Join(tables, ", ")),
			types.NewString("stopped"), types.Null, types.Null, types.Null}
		if a := s.get(d.Name); a != nil {
			a.mu.Lock()
			row[5] = types.NewString(a.status)
			if a.schemaErr != "" {
				row[5] = types.NewString("error: " + a.schemaErr)
			}
			if a.applied != 0 {
				row[6] = types.NewString(a.applied.String())
			}
			if a.stream != nil {
				var lagBytes int64
				_, idle := a.stream.IdleEnd()
				if end := a.stream.ServerEnd(); !(a.pending == 0 && idle) && end > a.applied {
					lagBytes = int64(end - a.applied)
				}
				lagSeconds := 0.0
				if lagBytes > 0 && !a.lastCommit.IsZero() {
					lagSeconds = time.Since(a.lastCommit).Seconds()
				}
				row[7], row[8] = types.NewInt(lagBytes), types.NewFloat(lagSeconds)
			}
			a.mu.Unlock()
		}
		rows = append(rows, row)
	}
	return rows
}
