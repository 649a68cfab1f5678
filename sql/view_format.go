package sql

import (
	"streamdb/catalog"
)

// checkViewFormats refuses a catalog with a view whose state format this
// binary cannot read (a directory written by a newer streamdb, or one too
// old), before any view starts: a view misread would serve wrong rows.
func checkViewFormats(descs []*catalog.Descriptor) error {
	for _, d := range descs {
		if d.Kind != catalog.KindView {
			continue
		}
		if err := catalog.CheckFormat("materialized view "+d.Name, d.Dataflow); err != nil {
			return err
		}
	}
	return nil
}
