package sql

import (
	"context"
	"fmt"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/pgwire"
)

// An ALTER of a materialized view keeps the view's indexes whose columns
// the new query still has. The swap moves every row of the view out of
// its table (exec.SwapViewState) and the new dataflow writes them again,
// so the swap's batch clears every index's entries and the materialize
// operator writes the kept indexes' entries with the rows. An index that
// names a column the view no longer has is dropped with a NOTICE.

// carriedIndexes sets d's indexes to those of old that d's columns still
// hold, and returns the others.
func carriedIndexes(old, d *catalog.Descriptor) (dropped []catalog.Index, err error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	d.Indexes = nil
	for _, ix := range old.Indexes {
		if _, ok := exec.IndexColumns(&ix, cols); ok {
			d.Indexes = append(d.Indexes, ix)
		} else {
			dropped = append(dropped, ix)
		}
	}
	return dropped, nil
}

// noticeDroppedIndexes tells the client which indexes the ALTER dropped
// and why.
func noticeDroppedIndexes(ctx context.Context, view string, dropped []catalog.Index) {
	for _, ix := range dropped {
		pgwire.Notice(ctx, fmt.Sprintf("index %s on materialized view %s was dropped: the view no longer has all of its columns", ix.Name, view), "")
	}
}
