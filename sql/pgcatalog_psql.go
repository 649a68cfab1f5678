package sql

import (
	"context"

	"streamdb/front"
	"streamdb/pgcatalog/rewrite"
	"streamdb/types"
)

// prepareCatalogQuery answers one of psql's or a driver's describe
// queries (recognised by the front layer, see front/psql.go) with
// rewrite.Describe's rows, computed when the statement runs.
func (s *session) prepareCatalogQuery(q *front.CatalogQuery) (*prepared, error) {
	cols, rows, err := rewrite.Describe(q, s.user, s.database)
	if err != nil {
		return nil, err
	}
	return taggedRows("SELECT", cols, func(context.Context) ([]types.Row, error) {
		return rows(catalogEngine{s.e}), nil
	}), nil
}
