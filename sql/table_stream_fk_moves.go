package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A streaming UPDATE of a table that other tables reference may change
// the values they reference: its primary key (UPDATE p SET k = k - 1) or
// the UNIQUE columns a foreign key names. With NO ACTION or RESTRICT on
// update, PostgreSQL checks after the statement's last row that no row
// still references an old value, unless a row of the table holds that
// value again by then. A value let go in one batch may be taken in a
// later one, so the per-batch check of removed keys (fkRun) cannot tell;
// these foreign keys are checked over the whole statement instead, as
// the primary key and the UNIQUE keys are (table_stream_pk.go,
// table_stream_unique.go). The referencing tables do not change during
// the statement (an UPDATE runs no ON UPDATE action here), so they are
// read as they were.
//
// ON UPDATE RESTRICT fails even then: PostgreSQL checks a RESTRICT
// reference to a changed value without looking for another holder, so a
// value let go that a row references fails whoever takes it.
//
// For each foreign key three key sets (storage.KeySets, which move to
// disk past a bound) hold the values rows let go, the values rows took,
// and the values let go while no row had taken them and some row of the
// referencing table references (pending). A value is let go at most once
// and taken at most once (the table's unique keys see to that), so a
// pending value taken later resolves it once, and the statement passes
// when every pending value was resolved; otherwise a pass over the
// referencing table finds a row left referencing a value no row holds,
// for the error.

// The sets of a foreign key, at fkMovesSets*link plus these.
const (
	fkMovesLetGo = iota
	fkMovesTaken
	fkMovesPending
	fkMovesSets
)

// streamFKMoves checks the foreign keys into one table over a streaming
// UPDATE.
type streamFKMoves struct {
	links []fkLink // every foreign key of another table into the table
	// state returns a referencing table as the statement found it.
	state             func(*catalog.Descriptor) (*tableState, error)
	sets              keySets
	pending, resolved []int // per link
	// refuse, when not nil, is the error of a value moved while a link
	// cannot be followed this way: it has an ON UPDATE action (the
	// catalog changed after the statement was planned).
	refuse error
}

// newStreamFKMoves returns the check of the foreign keys into table d
// (as the catalog has it once its logs are locked) of plan, or nil when
// none references d from another table. open makes its key sets.
func newStreamFKMoves(d *catalog.Descriptor, plan streamFKPlan, state func(*catalog.Descriptor) (*tableState, error), open func(n int) keySets) *streamFKMoves {
	m := &streamFKMoves{state: state}
	for _, l := range plan.links {
		if l.parent.ID != d.ID {
			continue
		}
		if !fkRestricts(l.con.OnUpdate) {
			m.refuse = foreignKeysChanged(d)
		}
		m.links = append(m.links, l)
	}
	if len(m.links) == 0 {
		return nil
	}
	m.sets = open(fkMovesSets * len(m.links))
	m.pending = make([]int, len(m.links))
	m.resolved = make([]int, len(m.links))
	return m
}

func (m *streamFKMoves) close() { m.sets.Close() }

// assignsReferenced reports whether an UPDATE of table d may change a
// value that one of links references in d: it assigns (sets, by column:
// nil for a column left alone) or generates a referenced column.
func assignsReferenced(links []fkLink, d *catalog.Descriptor, sets []expr.Expr) bool {
	for _, l := range links {
		if l.parent.ID != d.ID {
			continue
		}
		for _, c := range l.pcols {
			if c < len(d.Columns) && (d.Columns[c].Generated != "" || c < len(sets) && sets[c] != nil) {
				return true
			}
		}
	}
	return false
}

// batch notes the values a batch of the UPDATE's changes (each row as
// its deletion followed by its insertion) lets go and takes, and the
// values let go that no row took yet and a row references.
func (m *streamFKMoves) batch(ctx context.Context, changes []exec.Change) error {
	for i, l := range m.links {
		set := fkMovesSets * i
		var candidates map[string]bool
		for j := 0; j < len(changes); j++ {
			old := changes[j].Row
			var next types.Row
			if j+1 < len(changes) && changes[j].Sign < 0 && changes[j+1].Sign > 0 {
				next = changes[j+1].Row
				j++
			}
			ok, okOK, err := fkKey(pick(old, l.pcols), l.ptypes)
			if err != nil {
				return err
			}
			nk, nkOK := "", false
			if next != nil {
				if nk, nkOK, err = fkKey(pick(next, l.pcols), l.ptypes); err != nil {
					return err
				}
			}
			if okOK && nkOK && ok == nk {
				continue // the row keeps its value
			}
			if m.refuse != nil {
				return m.refuse
			}
			if okOK {
				if err := m.sets.Add(set+fkMovesLetGo, []byte(ok)); err != nil {
					return err
				}
				taken, err := m.sets.Has(set+fkMovesTaken, []byte(ok))
				if err != nil {
					return err
				}
				if !taken || restrictsMoves(l) {
					if candidates == nil {
						candidates = map[string]bool{}
					}
					candidates[ok] = true
				}
			}
			if nkOK {
				if err := m.take(i, nk); err != nil {
					return err
				}
			}
		}
		if err := m.referenced(ctx, i, candidates); err != nil {
			return err
		}
	}
	return nil
}

// take notes that a row of the statement took value key of link i.
func (m *streamFKMoves) take(i int, key string) error {
	set := fkMovesSets * i
	was, err := m.sets.Has(set+fkMovesTaken, []byte(key))
	if err != nil || was {
		return err
	}
	if err := m.sets.Add(set+fkMovesTaken, []byte(key)); err != nil {
		return err
	}
	pending, err := m.sets.Has(set+fkMovesPending, []byte(key))
	if err == nil && pending && !restrictsMoves(m.links[i]) {
		m.resolved[i]++
	}
	return err
}

// restrictsMoves reports whether l is ON UPDATE RESTRICT: a value it
// references moves only if no row references it, even when another row
// takes it.
func restrictsMoves(l fkLink) bool { return l.con.OnUpdate == "r" }

// referenced makes pending the values of candidates (let go by the
// batch) that no row took by the batch's end and a row of link i's
// referencing table references.
func (m *streamFKMoves) referenced(ctx context.Context, i int, candidates map[string]bool) error {
	set := fkMovesSets * i
	for k := range candidates {
		if restrictsMoves(m.links[i]) {
			break
		}
		taken, err := m.sets.Has(set+fkMovesTaken, []byte(k))
		if err != nil {
			return err
		}
		if taken {
			delete(candidates, k)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	l := m.links[i]
	ts, err := m.state(l.child)
	if err != nil {
		return err
	}
	matches := func(row types.Row) (bool, error) {
		k, ok, err := fkKey(pick(row, l.ccols), l.ptypes)
		return ok && candidates[k], err
	}
	rows, err := ts.rowsWithValues(ctx, l.child.Indexes, l.ccols, l.ptypes, candidates, matches)
	if err != nil {
		return err
	}
	for _, row := range rows {
		k, ok, err := fkKey(pick(row, l.ccols), l.ptypes)
		if err != nil || !ok {
			return err
		}
		was, err := m.sets.Has(set+fkMovesPending, []byte(k))
		if err != nil {
			return err
		}
		if !was {
			if err := m.sets.Add(set+fkMovesPending, []byte(k)); err != nil {
				return err
			}
			m.pending[i]++
		}
	}
	return nil
}

// finish fails with 23503 when a row still references a value the
// statement let go and no row took again.
func (m *streamFKMoves) finish(ctx context.Context) error {
	for i, l := range m.links {
		if m.pending[i] == m.resolved[i] {
			continue
		}
		set := fkMovesSets * i
		ts, err := m.state(l.child)
		if err != nil {
			return err
		}
		var found types.Row
		err = ts.EachRow(ctx, func(row types.Row) error {
			if found != nil {
				return nil
			}
			k, ok, err := fkKey(pick(row, l.ccols), l.ptypes)
			if err != nil || !ok {
				return err
			}
			pending, err := m.sets.Has(set+fkMovesPending, []byte(k))
			if err != nil || !pending {
				return err
			}
			taken, err := m.sets.Has(set+fkMovesTaken, []byte(k))
			if err == nil && (!taken || restrictsMoves(l)) {
				found = row
			}
			return err
		})
		if err != nil {
			return err
		}
		if found != nil {
			return fkReferenced(l, found)
		}
	}
	return nil
}

// foreignKeysChanged is the error of a streaming UPDATE that moves a
// value the foreign keys of table d, as they are once it runs, do not let
// it move a batch at a time.
func foreignKeysChanged(d *catalog.Descriptor) error {
	return sqlerr.New(sqlerr.SerializationFailure, "the foreign keys of table %q changed while the UPDATE began", d.Name).
		WithHint("Retry the statement.")
}
