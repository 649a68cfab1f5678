package sql

import (
	"streamdb/catalog"
	"streamdb/plan"
)

// A view is populating until its backfill is done (meta/populating.go);
// these are the names the rest of sql calls meta's checks by.

// populatingProgress returns a populating view's progress; ok is false
// once it is populated (meta.DDL.PopulatingProgress).
func (e *Engine) populatingProgress(d *catalog.Descriptor) (done, total uint64, ok bool) {
	return e.ddl.PopulatingProgress(d)
}

// checkPopulated refuses a query that reads a materialized view still
// being populated (55000). A query that reads no view asks nothing of
// meta.
func (e *Engine) checkPopulated(root plan.Node) error {
	for _, src := range plan.Sources(root) {
		if src.Kind == catalog.KindView {
			return e.ddl.CheckPopulated(root)
		}
	}
	return nil
}

// viewStatus is SHOW MATERIALIZED VIEWS' status (meta.DDL.ViewStatus).
func (e *Engine) viewStatus(d *catalog.Descriptor) string { return e.ddl.ViewStatus(d) }
