package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The rows an ALTER TABLE checks before meta applies it (SET NOT NULL,
// ADD PRIMARY KEY): read from the table's state as the ALTER's session
// sees them, through the table write path.

// checkNotNull fails with 23502 if a column that must not hold NULL does
// in a row of the table (after the change).
func (a *columnChange) checkNotNull(ctx context.Context) error {
	if len(a.notNull) == 0 || !a.isTable() {
		return nil
	}
	rows, err := a.rowsToCheck(ctx)
	if err != nil {
		return err
	}
	for _, name := range a.notNull {
		i := a.column(name)
		if i < 0 {
			continue
		}
		for _, r := range rows {
			v := a.Fill[i]
			if a.From[i] >= 0 {
				v = r[a.From[i]]
			}
			if v.IsNull() {
				return sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", name, a.New.Name)
			}
		}
	}
	return nil
}

// rowsToCheck returns the table's rows as the ALTER's session sees them:
// every commit acknowledged so far and, inside a transaction block, the
// block's own changes (Django's migrations UPDATE the NULLs away before
// SET NOT NULL in one block).
func (a *columnChange) rowsToCheck(ctx context.Context) ([]types.Row, error) {
	rows, err := a.s.e.currentTableRows(ctx, a.Old)
	if err != nil {
		return nil, err
	}
	changes := a.s.txChanges(a.Old)
	if len(changes) == 0 {
		return rows, nil
	}
	held := map[string][]int{} // a row's value → its positions in rows
	for i, r := range rows {
		k := string(meta.RowKey(nil, r))
		held[k] = append(held[k], i)
	}
	gone := map[int]bool{}
	for _, ch := range changes {
		if len(ch.Row) != len(a.Old.Columns) {
			continue // written before an earlier change of the columns
		}
		k := string(meta.RowKey(nil, ch.Row))
		if ch.Sign > 0 {
			held[k] = append(held[k], len(rows))
			rows = append(rows, ch.Row)
			continue
		}
		if at := held[k]; len(at) > 0 {
			gone[at[len(at)-1]] = true
			held[k] = at[:len(at)-1]
		}
	}
	out := rows[:0:0]
	for i, r := range rows {
		if !gone[i] {
			out = append(out, r)
		}
	}
	return out, nil
}

// currentTableRows reads every row of table d with every commit
// acknowledged so far.
func (e *Engine) currentTableRows(ctx context.Context, d *catalog.Descriptor) ([]types.Row, error) {
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	log := e.tables.Log(d.ID)
	log.Lock()
	defer log.Unlock()
	if err := e.ensureCurrent(ctx, d, log); err != nil {
		return nil, err
	}
	ts, err := e.openTableState(d, log)
	if err != nil {
		return nil, err
	}
	defer ts.Close()
	return ts.Rows(ctx)
}
