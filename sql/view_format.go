package sql

import "streamdb/storage"

// checkViewFormats refuses a catalog with a view whose state format this
// binary cannot read (a directory written by a newer streamdb, or one too
// old), before any view starts: a view misread would serve wrong rows.
func checkViewFormats(descs []*storage.Descriptor) error {
	for _, d := range descs {
		if d.Kind != storage.KindView {
			continue
		}
		if err := storage.CheckFormat("materialized view "+d.Name, d.Dataflow); err != nil {
			return err
		}
	}
	return nil
}
