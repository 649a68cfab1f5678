package sql

import (
	"cmp"
	"context"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
)

// A streaming UPDATE or DELETE of a table with foreign keys at either end
// checks them a batch at a time, against the other tables as they are:
// their logs are locked for the whole statement (streamingWrite), and the
// statement changes no other table. Each batch is checked exactly alone
// because the statement leaves every primary key as it is and the keys
// other tables reference are primary keys: a key the statement removes
// (a DELETE's) stays removed to its end, and a row it writes references
// a key of a table the statement does not change. So it streams only
// when the table does not reference itself, and every foreign key that
// references it names its primary key with NO ACTION or RESTRICT on both
// DELETE and UPDATE (a CASCADE, SET NULL or SET DEFAULT would change the
// referencing table in the same commit: the general path does that). A
// violation is reported at the end of the statement, as PostgreSQL
// checks its foreign keys after the statement's rows: an error of a later
// row comes first.

// streamFKLinks returns the foreign keys at either end of table d and the
// other tables they link (sorted by id); ok is false when one of them
// cannot be checked a batch at a time (above).
func (e *Engine) streamFKLinks(d *catalog.Descriptor) (links []fkLink, tables []*catalog.Descriptor, ok bool) {
	for _, l := range e.fkLinks() {
		var other *catalog.Descriptor
		switch {
		case l.child.ID == d.ID && l.parent.ID == d.ID:
			return nil, nil, false
		case l.child.ID == d.ID:
			other = l.parent
		case l.parent.ID == d.ID:
			if l.pkOrder == nil || !fkRestricts(l.con.OnDelete) || !fkRestricts(l.con.OnUpdate) || !fkChildKeyed(l) {
				return nil, nil, false
			}
			other = l.child
		default:
			continue
		}
		links = append(links, l)
		if !slices.ContainsFunc(tables, func(t *catalog.Descriptor) bool { return t.ID == other.ID }) {
			tables = append(tables, other)
		}
	}
	slices.SortFunc(tables, func(a, b *catalog.Descriptor) int { return cmp.Compare(a.ID, b.ID) })
	return links, tables, true
}

// fkRestricts reports whether a foreign key action changes nothing: NO
// ACTION or RESTRICT.
func fkRestricts(action string) bool {
	return action == "" || action == "a" || action == "r"
}

// fkChildKeyed reports whether l's child finds its rows referencing a key
// by a key path (tableState.keyPathFor): its primary key or one of its
// indexes leads with the referencing columns, of the referenced types.
func fkChildKeyed(l fkLink) bool {
	cols, err := l.child.Schema()
	if err != nil || len(l.child.PrimaryKey) == 0 {
		return false
	}
	for i, c := range l.ccols {
		if cols[c].Type != l.ptypes[i] {
			return false
		}
	}
	m := len(l.ccols)
	if pk := pkIndexes(l.child, cols); m <= len(pk) && positions(pk[:m], l.ccols) != nil {
		return true
	}
	for i := range l.child.Indexes {
		pos, ok := exec.IndexColumns(&l.child.Indexes[i], cols)
		if ok && len(pos) >= m && positions(pos[:m], l.ccols) != nil {
			return true
		}
	}
	return false
}

// streamFK checks the foreign keys of one streaming UPDATE or DELETE.
type streamFK struct {
	d   *catalog.Descriptor
	run *fkRun
	// violation is the first batch's 23503, reported by finish.
	violation error
}

// newStreamFK returns the check of links (streamFKLinks' for table d)
// reading the other tables through state, or nil when there are none.
func (s *session) newStreamFK(d *catalog.Descriptor, links []fkLink, state func(*catalog.Descriptor) (*tableState, error)) *streamFK {
	if len(links) == 0 {
		return nil
	}
	f := s.newInsertFK(links, state)
	f.check = true // no actions: every link restricts
	return &streamFK{d: d, run: f}
}

// batch checks a batch of the statement's changes to the table: the rows
// it writes find their referenced keys, and no row references a key it
// deletes. Once one has failed, the others are not checked.
func (f *streamFK) batch(ctx context.Context, changes []exec.Change) error {
	if f.violation != nil {
		return nil
	}
	r := f.run
	clear(r.changes)
	clear(r.derived)
	r.deltas, r.overlays = nil, nil
	r.add(f.d, changes)
	_, err := r.run(ctx)
	if se, ok := err.(*sqlerr.Error); ok && se.Code == sqlerr.ForeignKeyViolation {
		f.violation = err
		return nil
	}
	return err
}

// finish returns the first violation.
func (f *streamFK) finish() error { return f.violation }
