package sql

import (
	"context"

	"streamdb/pgwire"
	"streamdb/types"
)

// inBlockOr runs inBlock inside a transaction block and outside one
// otherwise.
func (s *session) inBlockOr(inBlock, outside *prepared) *prepared {
	return &prepared{run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		if s.tx != nil {
			return inBlock.run(ctx, vals, w)
		}
		return outside.run(ctx, vals, w)
	}}
}
