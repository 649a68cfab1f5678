package sql

import (
	"context"
	"fmt"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// A table's UNIQUE constraints are checked against an in-memory index
// per table (uniqueIndex): for each constraint, how many rows hold each
// value of its columns. The index describes what the table's writers see
// under the log's lock: the committed state plus every entry of the log,
// queued or acknowledged. It is built from a full read of the table the
// first time a write needs it, then kept current by each commit under the
// lock (apply). A commit that fails after it was applied marks the index
// stale (its changes may or may not have landed), and the next writer
// builds it again; so an index is never missing a row the table holds.
// Rows with a NULL in a constraint's columns are left out: NULLs are
// distinct.

// uniqueIndex counts the rows per value of each UNIQUE constraint of one
// table.
type uniqueIndex struct {
	d      *catalog.Descriptor // the descriptor it was built for
	cons   []catalog.Constraint
	cols   [][]int
	counts []map[string]int
}

// uniqueCols returns table d's UNIQUE constraints and their column
// indexes.
func uniqueCols(d *catalog.Descriptor, cols []types.Column) ([]catalog.Constraint, [][]int) {
	var cons []catalog.Constraint
	var idx [][]int
	for _, c := range d.Constraints {
		if c.Type != "u" {
			continue
		}
		ix := make([]int, len(c.Columns))
		for i, name := range c.Columns {
			ix[i] = columnIndex(cols, name)
		}
		cons = append(cons, c)
		idx = append(idx, ix)
	}
	return cons, idx
}

// uniqueKey encodes row's values of cols; ok is false when one is NULL.
func uniqueKey(cols []int, row types.Row) (string, bool) {
	var b []byte
	for _, c := range cols {
		if row[c].IsNull() {
			return "", false
		}
		b = keyenc.Append(b, row[c])
	}
	return string(b), true
}

// uniqueIndexFor returns table d's unique index, building it when there is
// none, it is stale, or d changed. Nil when d has no UNIQUE constraint.
// Holding log.mu.
func (e *Engine) uniqueIndexFor(ctx context.Context, d *catalog.Descriptor, log *tableLog) (*uniqueIndex, error) {
	if log.uniqStale.Swap(false) {
		log.uniq = nil
	}
	if u := log.uniq; u != nil && u.d == d {
		return u, nil
	}
	log.uniq = nil
	if !hasConstraint(d, "u") {
		return nil, nil
	}
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	cons, idx := uniqueCols(d, cols)
	if len(cons) == 0 {
		return nil, nil
	}
	ts, err := e.openTableState(d, log)
	if err != nil {
		return nil, err
	}
	defer ts.close()
	u := &uniqueIndex{d: d, cons: cons, cols: idx, counts: make([]map[string]int, len(cons))}
	for i := range cons {
		u.counts[i] = map[string]int{}
	}
	// The rows stream by: the index keeps their constrained values only.
	err = ts.eachRow(ctx, func(r types.Row) error {
		u.add(r, 1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	log.uniq = u
	return u, nil
}

func (u *uniqueIndex) add(row types.Row, sign int) {
	for i, c := range u.cols {
		if k, ok := uniqueKey(c, row); ok {
			if n := u.counts[i][k] + sign; n > 0 {
				u.counts[i][k] = n
			} else {
				delete(u.counts[i], k)
			}
		}
	}
}

// apply records a commit's changes. Holding log.mu.
func (u *uniqueIndex) apply(changes []exec.Change) {
	if u == nil {
		return
	}
	for _, ch := range changes {
		u.add(ch.Row, int(ch.Sign))
	}
}

// check fails with PostgreSQL's unique violation if, with base and then
// changes applied to the indexed rows, a value changes inserts is held by
// more than one row. base are changes already made on top of the index
// that it does not hold (a transaction's earlier statements).
//
// deferred, when not nil, tells the constraints a transaction's
// statement leaves to its COMMIT.
func (u *uniqueIndex) check(d *catalog.Descriptor, cols []types.Column, base, changes []exec.Change, deferred func(catalog.Constraint) bool) error {
	if u == nil {
		return nil
	}
	for i, c := range u.cols {
		if deferred != nil && deferred(u.cons[i]) {
			continue // checked at COMMIT
		}
		delta := map[string]int{}
		for _, chs := range [][]exec.Change{base, changes} {
			for _, ch := range chs {
				if k, ok := uniqueKey(c, ch.Row); ok {
					delta[k] += int(ch.Sign)
				}
			}
		}
		for _, ch := range changes {
			if ch.Sign < 0 {
				continue
			}
			k, ok := uniqueKey(c, ch.Row)
			if ok && u.counts[i][k]+delta[k] > 1 {
				return uniqueViolation(u.cons[i].Name, cols, c, ch.Row)
			}
		}
	}
	return nil
}

// uniqueViolation is PostgreSQL's 23505 for constraint name on row's key
// columns.
func uniqueViolation(name string, cols []types.Column, key []int, row types.Row) error {
	names := make([]string, len(key))
	vals := make([]string, len(key))
	for i, j := range key {
		names[i] = cols[j].Name
		vals[i] = types.FormatText(row[j], cols[j].Type)
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("duplicate key value violates unique constraint \"%s\"", name),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.", strings.Join(names, ", "), strings.Join(vals, ", "))}
}

// checkConstraints checks a statement's changes to table ts.d against the
// table's CHECK and UNIQUE constraints, on top of base (the statement's
// transaction's earlier changes to the table, nil outside one). A
// statement of a transaction reads its snapshot (ts.log nil), but its
// UNIQUE values are checked against the table as it is now, as
// PostgreSQL checks them against committed and in-progress rows.
//
// deferred, when not nil (a transaction's statement), tells the
// constraints that wait for its COMMIT.
func (e *Engine) checkConstraints(ctx context.Context, ts *tableState, base, changes []exec.Change, deferred func(catalog.Constraint) bool) error {
	d := e.current(ts.d)
	if len(d.Constraints) == 0 {
		return nil
	}
	if err := checkRows(d, ts.cols, changes); err != nil {
		return err
	}
	if !hasConstraint(d, "u") {
		return nil
	}
	log := ts.log
	if log == nil {
		log = e.tables.log(d.ID)
		log.mu.Lock()
		defer log.mu.Unlock()
		if err := e.ensureCurrent(ctx, d, log); err != nil {
			return err
		}
	}
	u, err := e.uniqueIndexFor(ctx, d, log)
	if err != nil {
		return err
	}
	return u.check(d, ts.cols, base, changes, deferred)
}

func hasConstraint(d *catalog.Descriptor, typ string) bool {
	for _, c := range d.Constraints {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// txChanges returns the open transaction's changes to table d so far, in
// changelog order (nil outside a transaction).
func (s *session) txChanges(d *catalog.Descriptor) []exec.Change {
	if s.tx == nil {
		return nil
	}
	for _, w := range s.tx.tables {
		if w.d.ID == d.ID {
			return exec.ChangelogOrder(w.stmts)
		}
	}
	return nil
}

// current returns the catalog's descriptor of table d now: a statement
// bound before ALTER TABLE ... ADD CONSTRAINT is checked against the new
// constraint when it commits.
func (e *Engine) current(d *catalog.Descriptor) *catalog.Descriptor {
	if cur, ok := e.lookup(d.Name); ok && cur.ID == d.ID {
		return cur
	}
	return d
}
