package sql

import (
	"context"
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/types"
)

// An autocommit INSERT ... SELECT ... ON CONFLICT (primary key) DO UPDATE
// streams as a DO NOTHING does (bulkInsertQuery): the query runs inside
// one streaming commit (streamingWrite, the table's log lock held
// throughout), and its rows are resolved, checked and published a batch
// at a time. Each proposed row's key is looked up in the table as it was
// before the statement (the commit's own changes are applied only after
// its decision), and the keys the statement inserted or updated are kept
// in storage.KeySets, which move to disk past a bound: a proposed row
// whose key is among them is 21000, in whichever batch it comes. So the
// statement's memory does not grow with its rows.
//
// It streams only where that is exact: the primary key is the only
// arbiter and the only unique key (no UNIQUE constraint, unique index or
// foreign key on the table), the SET list leaves the key's columns alone
// (so an update's delete and insert share a key and a batch), and SET and
// WHERE have no subqueries. Other statements take writeUpsert, which
// reads the query's rows whole first.

// streamsUpsert reports whether up, the DO UPDATE of an INSERT ... SELECT
// into table d by this session, streams (streamUpsert).
func (s *session) streamsUpsert(d *catalog.Descriptor, up *upsert) bool {
	if !s.canBulkInsert(d) || up.subqueries != nil {
		return false
	}
	return upsertStreamTableOK(s.e, s.e.current(d), up)
}

// upsertStreamTableOK reports whether table d (as the catalog has it)
// takes up as a streaming upsert.
func upsertStreamTableOK(e *Engine, d *catalog.Descriptor, up *upsert) bool {
	if len(d.PrimaryKey) == 0 || !bulkTableOK(e, d) {
		return false
	}
	if len(up.arb) != 1 || !up.arb[catalog.PrimaryKeyName(d.Name)] {
		return false
	}
	for i, c := range d.Columns {
		if !slices.Contains(d.PrimaryKey, c.Name) {
			continue
		}
		if c.Generated != "" || i < len(up.sets) && up.sets[i] != nil {
			return false
		}
	}
	return true
}

// streamUpsert runs INSERT ... SELECT ... ON CONFLICT DO UPDATE into table
// d as one streaming commit: query's rows, converted by convert, are the
// proposed rows; up is bound to the statement's parameters and time.
// written is handed the rows inserted and the new versions of those
// updated, a batch at a time, for RETURNING. It returns the command tag.
func (s *session) streamUpsert(ctx context.Context, d *catalog.Descriptor, up *upsert, query *adHoc, vals []types.Datum,
	convert func(types.Row) (types.Row, error), written func([]types.Row) error) (string, error) {
	still := func(cur *catalog.Descriptor) bool {
		return upsertStreamTableOK(s.e, cur, up) && slices.Equal(cur.PrimaryKey, d.PrimaryKey)
	}
	sw, err := s.openStreamingWrite(ctx, d, "the INSERT", still, nil)
	if err != nil {
		return "", err
	}
	defer sw.close()
	ts, b := sw.ts, sw.b
	run, err := s.newUpsertRun(sw.d, ts, up)
	if err != nil {
		return "", err
	}
	mine := sw.e.store.NewKeySets(1)
	defer mine.Close()
	cur := sw.e.current(sw.d)
	checks := newRowChecks(cur, ts.cols)
	var n int64
	changes := make([]exec.Change, 0, 2*bulkBatchRows)
	var rows []types.Row
	// resolve turns a batch of proposed rows into changes, checked.
	resolve := func(proposed []types.Row) error {
		changes, rows = changes[:0], rows[:0]
		for _, row := range proposed {
			ch := exec.Change{Row: row, Sign: exec.Insert}
			if err := computeGenerated(run.gen, []exec.Change{ch}); err != nil {
				return err
			}
			if err := checkNotNull(cur, ts.cols, row); err != nil {
				return err
			}
			if err := checks.check([]exec.Change{ch}); err != nil {
				return err
			}
			key := rowKey(ts.key, row)
			again, err := mine.Has(0, key)
			if err != nil {
				return err
			}
			if again {
				return sqlerr.New(sqlerr.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").
					WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
			}
			old, err := ts.Lookup(key)
			if err != nil {
				return err
			}
			if old != nil {
				next, ok, err := run.updated(old, row)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				if err := checkNotNull(cur, ts.cols, next); err != nil {
					return err
				}
				if err := checks.check([]exec.Change{{Row: next, Sign: exec.Insert}}); err != nil {
					return err
				}
				changes = append(changes, exec.Change{Row: old, Sign: exec.Delete}, exec.Change{Row: next, Sign: exec.Insert})
				row = next
			} else {
				changes = append(changes, ch)
			}
			if err := mine.Add(0, key); err != nil {
				return err
			}
			rows = append(rows, row)
		}
		n += int64(len(rows))
		return nil
	}
	begun := false
	publishResolved := func() error {
		if !begun {
			if err := b.begin(); err != nil {
				return err
			}
			begun = true
		}
		if err := b.add(exec.ChangelogOrder([][]exec.Change{changes})); err != nil {
			return err
		}
		return written(rows)
	}
	publish := func(proposed []types.Row) error {
		if err := resolve(proposed); err != nil || len(changes) == 0 {
			return err
		}
		return publishResolved()
	}
	batch := &batchingWriter{convert: convert, emit: publish, rows: make([]types.Row, 0, bulkBatchRows)}
	// openStreamingWrite holds stateMu shared, as runLocked needs.
	_, err = query.runLocked(ctx, vals, batch)
	if err == nil && !begun && len(batch.rows) > 0 {
		// All of it in one batch: committed as any small commit is when
		// its changes fit in one message (streamingWrite.commitSmall).
		err = resolve(batch.rows)
		if err == nil && len(changes) > 0 {
			var small bool
			noCheck := func([]exec.Change) error { return nil }
			if small, err = sw.commitSmall(noCheck, changes); small && err == nil {
				return fmt.Sprintf("INSERT 0 %d", n), written(rows)
			}
			if err == nil {
				err = publishResolved()
			}
		}
	} else if err == nil {
		err = batch.flush()
	}
	if err == nil && begun {
		err = b.flush()
	}
	if err != nil {
		if begun {
			// Nothing refers to the data published so far.
			b.abort()
		}
		return "", err
	}
	if begun {
		if err := sw.commit("an INSERT"); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("INSERT 0 %d", n), nil
}
