package sql

import (
	"context"
	"time"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// AS OF TIMESTAMP over tables that keep history (WITH (history = 'w')):
// a SELECT whose every source is such a table, at a time t within each
// one's window, reads each table exactly as committed before t. The rows
// are the table's committed state now with the changelog messages stored
// at or after t undone, newest first (a change's inverse is the opposite
// change of the same row), or, if the state has not reached t yet, the
// messages stored before t applied. Any other AS OF TIMESTAMP is answered
// by the newest checkpoint or savepoint at or before t.

// prepareHistoryAsOf prepares st when it is such a query; ok is false
// when it is not (the caller answers it from a checkpoint).
func (s *session) prepareHistoryAsOf(st *front.Statement, params *binder.Params) (p *prepared, ok bool, err error) {
	if st.AsOf == nil || st.AsOf.Kind != front.PointTimestamp {
		return nil, false, nil
	}
	at, err := types.ParseTimestamp(st.AsOf.Time)
	if err != nil {
		return nil, false, nil
	}
	trial := params.Clone()
	root, err := s.bindQuery(st, trial)
	if err != nil || len(withSubqueries(root)) > 1 {
		return nil, false, nil
	}
	scans := plan.Scans(root)
	if len(scans) == 0 || len(plan.Sources(root)) != len(scans) {
		return nil, false, nil
	}
	for _, sc := range scans {
		if !s.e.keepsHistoryAt(sc.Object, at) {
			return nil, false, nil
		}
	}
	*params = *trial
	return &prepared{params: params, cols: root.Schema(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		s.e.stateMu.RLock()
		defer s.e.stateMu.RUnlock()
		snap := s.e.state.Snapshot()
		defer snap.Close()
		tables := map[uint32][]types.Row{}
		for _, sc := range plan.Scans(root) {
			d, ok := s.e.lookup(sc.Object.Name)
			if !ok || d.ID != sc.Object.ID {
				return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", sc.Object.Name)
			}
			if _, done := tables[d.ID]; done {
				continue
			}
			if !s.e.keepsHistoryAt(d, at) {
				return "", sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "table %s no longer keeps its history back to %s", d.Name, at.Format(time.RFC3339Nano)).
					WithHint("Its history option sets how far back AS OF TIMESTAMP reads it exactly.")
			}
			rows, err := s.e.tableRowsBefore(ctx, d, snap, at)
			if err != nil {
				return "", err
			}
			tables[d.ID] = rows
		}
		bound, err := bindPlan(root, vals, func(sc *plan.Scan) (plan.Node, error) {
			rows := tables[sc.Object.ID]
			out := *sc
			out.StoredKey = nil
			out.Rows = func() []types.Row { return rows }
			return &out, nil
		})
		if err != nil {
			return "", err
		}
		return runAndWrite(ctx, bound, snap, w)
	}}, true, nil
}

// keepsHistoryAt reports whether d is a table that keeps its changelog
// back to at (meta.KeepsHistoryAt, as of now).
func (e *Engine) keepsHistoryAt(d *catalog.Descriptor, at time.Time) bool {
	return meta.KeepsHistoryAt(d, at, time.Now())
}

// tableRowsBefore returns table d's rows as committed before at: its state
// in snap moved back (or forward) along its changelog to the last message
// stored before at.
func (e *Engine) tableRowsBefore(ctx context.Context, d *catalog.Descriptor, snap *meta.Snapshot, at time.Time) ([]types.Row, error) {
	pos, err := meta.PositionAt(snap, d.ID, 0)
	if err != nil {
		return nil, err
	}
	ts, err := newTableState(d, snap, nil)
	if err != nil {
		return nil, err
	}
	rows, err := ts.Rows(ctx)
	if err != nil {
		return nil, err
	}
	next, err := e.streams.SeqAtTime(ctx, d, at)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InternalError, "read the changelog of table %s: %v", d.Name, err)
	}
	target := max(next-1, d.StartSeq) // the last message the answer holds
	cols, missing, err := exec.DescriptorMessageColumns(d)
	if err != nil {
		return nil, err
	}
	dec := exec.NewChangelogMessageDecoder(cols, missing)
	var msgs [][]exec.Change
	from, to := pos.Seq+1, target
	if target < pos.Seq {
		from, to = target+1, pos.Seq
	}
	err = e.streams.Read(ctx, d, from, to, func(_ uint64, data []byte) error {
		changes, err := dec.Decode(data)
		if err != nil {
			return err
		}
		msgs = append(msgs, changes)
		return nil
	})
	if err != nil {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot read table %s as of %s: %v", d.Name, at.Format(time.RFC3339Nano), err).
			WithHint("The changelog before that time was purged; a table's history option sets how far back it is kept.")
	}
	if target >= pos.Seq {
		for _, m := range msgs {
			rows = meta.ApplyChanges(ts.key, rows, m)
		}
		return rows, nil
	}
	var undo []exec.Change
	for i := len(msgs) - 1; i >= 0; i-- {
		for j := len(msgs[i]) - 1; j >= 0; j-- {
			ch := msgs[i][j]
			undo = append(undo, exec.Change{Row: ch.Row, Sign: -ch.Sign})
		}
	}
	return meta.ApplyChanges(ts.key, rows, undo), nil
}
