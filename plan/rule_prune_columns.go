package plan

import (
	"streamdb/catalog"
)

// pruneColumnsRule drops the columns nothing reads (PruneColumns):
// projections compute only what is read above them and a join's inputs
// are narrowed to the columns read above it or by its keys and condition.
// The output columns stay; the projections it adds keep no state, so the
// operators' state numbering is the same with or without it.
var pruneColumnsRule = Rule{Name: "prune_columns", Since: catalog.DataflowNarrowRows, Apply: PruneColumns}
