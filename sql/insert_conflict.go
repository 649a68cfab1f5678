package sql

import (
	"context"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// INSERT ... ON CONFLICT DO NOTHING leaves out the rows that would
// violate a unique key (the primary key, a UNIQUE constraint, a unique
// index) named as arbiter: every one when the clause names no target,
// else the one its columns or ON CONSTRAINT name. A row is left out when
// its key is held by the table as the statement sees it (committed rows
// and the transaction's own) or by a row the statement inserts before
// it. NOT NULL and CHECK are checked before conflicts, as PostgreSQL
// does; a conflict on a key that is not an arbiter is still a 23505.
// An autocommit statement is computed at its commit, against the table
// as it is then, so it skips a row another session committed just
// before. In a transaction block the rows are skipped by the block's
// snapshot; when COMMIT then finds an inserted key taken by a commit the
// snapshot did not see, it fails with 40001, as PostgreSQL's REPEATABLE
// READ does for a conflicting row its snapshot does not see (PostgreSQL
// fails the INSERT, after waiting for the other transaction; streamdb,
// which does not wait, fails the COMMIT), not with 23505.

// conflictArbiters names the unique keys of table d whose conflicts oc
// skips; nil oc is a plain INSERT (nil result).
func conflictArbiters(d *catalog.Descriptor, oc *front.OnConflict) (map[string]bool, error) {
	if oc == nil {
		return nil, nil
	}
	if d.Kind != catalog.KindTable {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ON CONFLICT on stream %q is not supported", d.Name).
			WithHint("A stream keeps every message; ON CONFLICT works on tables.")
	}
	keys := uniqueKeys(d)
	arb := map[string]bool{}
	for _, k := range keys {
		switch {
		case oc.Constraint != "":
			if k.name == oc.Constraint && !k.index {
				arb[k.name] = true
			}
		case len(oc.Columns) > 0:
			if sameColumnSet(k.cols, oc.Columns) {
				arb[k.name] = true
			}
		default:
			arb[k.name] = true
		}
	}
	if len(arb) == 0 {
		if oc.Constraint != "" {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "constraint %q for table %q does not exist", oc.Constraint, d.Name)
		}
		if len(oc.Columns) > 0 {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "there is no unique or exclusion constraint matching the ON CONFLICT specification").
				WithHint("Name the columns of the table's primary key, of a UNIQUE constraint or of a unique index, or leave the target out.")
		}
	}
	return arb, nil
}

// uniqueKeyCols is one of a table's unique keys by constraint name.
type uniqueKeyCols struct {
	name  string
	cols  []string
	index bool // a unique index, which ON CONSTRAINT does not name
}

// uniqueKeys lists table d's primary key, UNIQUE constraints and unique
// indexes.
func uniqueKeys(d *catalog.Descriptor) []uniqueKeyCols {
	var keys []uniqueKeyCols
	if len(d.PrimaryKey) > 0 {
		keys = append(keys, uniqueKeyCols{name: catalog.PrimaryKeyName(d.Name), cols: d.PrimaryKey})
	}
	for _, c := range d.Constraints {
		if c.Type == "u" {
			keys = append(keys, uniqueKeyCols{name: c.Name, cols: c.Columns})
		}
	}
	for _, ix := range d.Indexes {
		if ix.Unique && !ix.Constraint { // a constraint's is listed above
			cols := make([]string, len(ix.Columns))
			for i, c := range ix.Columns {
				cols[i] = c.Name
			}
			keys = append(keys, uniqueKeyCols{name: ix.Name, cols: cols, index: true})
		}
	}
	return keys
}

func sameColumnSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// skipConflicts returns the changes (an INSERT's rows, in order) that do
// not conflict on an arbiter key, and their positions in changes.
func (s *session) skipConflicts(ctx context.Context, d *catalog.Descriptor, ts *tableState, changes []exec.Change, arb map[string]bool) ([]exec.Change, []int, error) {
	cur := s.e.current(ts.d)
	keys := uniqueKeys(cur)
	pos := make([][]int, len(keys))
	seen := make([]map[string]bool, len(keys))
	for i, k := range keys {
		pos[i] = make([]int, len(k.cols))
		for j, name := range k.cols {
			pos[i][j] = columnIndex(ts.cols, name)
		}
		seen[i] = map[string]bool{}
	}
	base, err := s.txUniqueBase(ts, changes)
	if err != nil {
		return nil, nil, err
	}
	var kept []exec.Change
	var at []int
	for n, ch := range changes {
		one := changes[n : n+1]
		if err := checkRows(cur, ts.cols, one); err != nil {
			return nil, nil, err
		}
		conflict := false
		// A row with a NULL in a NOT NULL column is kept: the
		// statement's checks fail on it.
		nullViolation := false
		for i, c := range cur.Columns {
			nullViolation = nullViolation || (c.NotNull && i < len(ch.Row) && ch.Row[i].IsNull())
		}
		if !nullViolation {
			for i, k := range keys {
				if v, ok := uniqueKey(pos[i], ch.Row); ok && arb[k.name] && seen[i][v] {
					conflict = true
				}
			}
			if !conflict {
				var err error
				if conflict, err = s.conflictsWithTable(ctx, d, ts, base, one, arb); err != nil {
					return nil, nil, err
				}
			}
		}
		if conflict {
			continue
		}
		for i := range keys {
			if v, ok := uniqueKey(pos[i], ch.Row); ok {
				seen[i][v] = true
			}
		}
		kept = append(kept, ch)
		at = append(at, n)
	}
	return kept, at, nil
}

// conflictsWithTable reports whether the row of one conflicts with the
// table's rows on an arbiter key. A conflict on another key is left for
// the statement's own checks to report.
func (s *session) conflictsWithTable(ctx context.Context, d *catalog.Descriptor, ts *tableState, base, one []exec.Change, arb map[string]bool) (bool, error) {
	for _, check := range []func() error{
		func() error { return checkTableChanges(d, ts.cols, one, ts.KeyTaken) },
		func() error { return checkUniqueIndexes(d, ts, one) },
		func() error { return s.e.checkConstraints(ctx, ts, base, one, s.deferredCheck()) },
	} {
		err := check()
		if err == nil {
			continue
		}
		if name, ok := violatedKey(err); ok {
			if arb[name] {
				return true, nil
			}
			continue
		}
		return false, err
	}
	return false, nil
}

// violatedKey returns the constraint named by a unique violation.
func violatedKey(err error) (string, bool) {
	e, ok := err.(*sqlerr.Error)
	if !ok || e.Code != sqlerr.UniqueViolation {
		return "", false
	}
	_, rest, ok := strings.Cut(e.Message, "violates unique constraint \"")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "\"")
	return name, ok
}

// insertIntoTableSkipping is insertIntoTable for ON CONFLICT DO NOTHING:
// it returns the rows inserted.
func (s *session) insertIntoTableSkipping(ctx context.Context, d *catalog.Descriptor, rows []types.Row, arb map[string]bool) ([]types.Row, error) {
	var at []int
	err := s.changeTableFiltered(ctx, d, readsNothing, func([]types.Row) ([]exec.Change, error) {
		changes := make([]exec.Change, len(rows))
		for i, r := range rows {
			changes[i] = exec.Change{Row: r, Sign: exec.Insert}
		}
		return changes, nil
	}, func(ctx context.Context, ts *tableState, changes []exec.Change) ([]exec.Change, error) {
		kept, pos, err := s.skipConflicts(ctx, d, ts, changes, arb)
		at = pos
		return kept, err
	})
	if err != nil {
		return nil, err
	}
	if s.tx != nil && len(at) > 0 {
		w := s.tx.table(d)
		if n := len(w.stmts); n > 0 && len(w.stmts[n-1]) == len(at) {
			if s.tx.doNothing == nil {
				s.tx.doNothing = map[*exec.Change]doNothingStmt{}
			}
			s.tx.doNothing[&w.stmts[n-1][0]] = doNothingStmt{n: len(at), arbiters: arb}
			if err := s.noteTxWrite(w, w.stmts[n-1]); err != nil {
				return nil, err
			}
		}
	}
	out := make([]types.Row, len(at))
	for i, n := range at {
		out[i] = rows[n]
	}
	return out, nil
}

// doNothingStmt is a statement of a transaction block that inserted n
// rows with ON CONFLICT DO NOTHING on the arbiters named.
type doNothingStmt struct {
	n        int
	arbiters map[string]bool
}

// doNothingConflict turns a COMMIT's unique violation into 40001 when
// every row the block wrote to the table was inserted by ON CONFLICT DO
// NOTHING with the violated key as arbiter: a commit the block's
// snapshot did not see took the key, so under snapshot isolation the
// block cannot be ordered after it (PostgreSQL's REPEATABLE READ raises
// the same). Other errors are returned as they are.
func (t *txn) doNothingConflict(err error) error {
	name, ok := violatedKey(err)
	if !ok {
		return err
	}
	for _, w := range t.tables {
		if !slices.ContainsFunc(uniqueKeys(w.d), func(k uniqueKeyCols) bool { return k.name == name }) {
			continue
		}
		all, some := w.spill.doNothingOn(name)
		for _, stmt := range w.stmts {
			if len(stmt) == 0 {
				continue
			}
			dn, ok := t.doNothing[&stmt[0]]
			if !ok || dn.n != len(stmt) || !dn.arbiters[name] {
				all = false
				break
			}
			some = true
		}
		if all && some {
			se := err.(*sqlerr.Error)
			out := sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update").
				WithHint("Retry the transaction: INSERT ... ON CONFLICT DO NOTHING then sees the row and skips it.")
			out.Detail = strings.TrimSpace(se.Detail + " A transaction that committed after this one began inserted it.")
			return out
		}
	}
	return err
}
