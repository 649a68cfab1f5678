package sql

import (
	"context"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// TRUNCATE empties tables: one commit deleting every row of each (all of
// them or none, at any size), so views over them see it in one epoch.
// Inside a transaction block it is one more statement of the block, as in
// PostgreSQL. It needs the TRUNCATE privilege on each table, as in
// PostgreSQL. A table a foreign key references is truncated
// only with the referencing tables, which CASCADE adds
// (truncateForeignKeys). RESTART IDENTITY restarts the sequences the tables'
// columns own once the rows are gone; like nextval, that is not undone by
// a ROLLBACK of the block (PostgreSQL undoes it).
func (s *session) prepareTruncate(n *front.Truncate) (*prepared, error) {
	var descs []*catalog.Descriptor
	for _, name := range n.Tables {
		d, ok := s.e.lookup(name)
		if !ok {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		}
		if d.Kind != catalog.KindTable {
			hint := "TRUNCATE empties tables (CREATE TABLE without APPEND ONLY)."
			if d.Kind == catalog.KindStream {
				hint = "A stream is append-only: its events stay in its JetStream stream."
			}
			return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is not a table", name).WithHint("%s", hint)
		}
		if !slices.ContainsFunc(descs, func(x *catalog.Descriptor) bool { return x.ID == d.ID }) {
			descs = append(descs, d)
		}
	}
	descs, err := s.e.truncateForeignKeys(descs, n.Cascade)
	if err != nil {
		return nil, err
	}
	deleteAll := func(rows []types.Row) ([]exec.Change, error) {
		changes := make([]exec.Change, len(rows))
		for i, r := range rows {
			changes[i] = exec.Change{Row: r, Sign: exec.Delete}
		}
		return changes, nil
	}
	restart := func(ctx context.Context) (string, error) {
		if n.RestartIdentity {
			for _, d := range descs {
				for _, q := range s.e.ownedSequences(d) {
					if err := s.e.seqs.Set(ctx, q, q.Sequence.Start, false); err != nil {
						return "", err
					}
				}
			}
		}
		return "TRUNCATE TABLE", nil
	}
	return command(func(ctx context.Context) (string, error) {
		if s.tx != nil {
			for _, d := range descs {
				if err := s.changeTable(ctx, d, nil, deleteAll); err != nil {
					return "", err
				}
			}
			return restart(ctx)
		}
		if len(descs) == 1 && s.streamsChange(descs[0], nil, nil) {
			// One table that takes streaming commits: its rows stream
			// into the commit rather than being read whole first.
			remove := func(row types.Row, out []exec.Change) ([]exec.Change, bool, error) {
				return append(out, exec.Change{Row: row, Sign: exec.Delete}), true, nil
			}
			if _, err := s.streamChange(ctx, descs[0], "the TRUNCATE", remove, func([]exec.Change) error { return nil }); err != nil {
				return "", err
			}
			return restart(ctx)
		}
		writes := make([]*tableWrite, len(descs))
		for i, d := range descs {
			writes[i] = &tableWrite{d: d, compute: func(ctx context.Context, ts *tableState) ([]exec.Change, error) {
				rows, err := ts.Rows(ctx)
				if err != nil {
					return nil, err
				}
				return deleteAll(rows)
			}}
		}
		if err := s.commitWrites(ctx, writes, nil); err != nil {
			return "", err
		}
		return restart(ctx)
	}), nil
}
