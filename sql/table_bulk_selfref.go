package sql

import (
	"context"
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A streaming insert (COPY, INSERT ... SELECT) into a table whose
// foreign key references the table's own primary key checks it at the
// end of the statement, as PostgreSQL does: a row may reference a row
// the statement inserts before it, after it, or itself. A row's
// reference is satisfied at once when the table holds the key or a row
// kept before (or in the same batch) has it (bulkKeys' set of the
// primary keys kept); otherwise the key goes into a set of missing keys
// (storage.KeySets, on disk past a bound), and a row kept later with that
// key resolves it. The keys are told apart by count: a missing key is
// added once and resolved at most once, since the statement inserts each
// primary key once. When the counts differ at the end, the commit's data
// is read back to find a row whose key never came, for the error.

// bulkSelfRefs checks the self-references of one streaming insert.
type bulkSelfRefs struct {
	keys     *bulkKeys
	links    []fkLink
	missing  keySets // one set per link
	pending  []int   // per link: keys made missing
	resolved []int   // per link: missing keys a later row inserted
	ref      []byte
	own      []byte
}

// selfRefStreams reports whether a foreign key of a table onto itself can
// be checked by bulkSelfRefs: it references the primary key, with
// columns of the key's types (so a reference encodes as the key does).
func selfRefStreams(l fkLink) bool {
	if l.pkOrder == nil {
		return false
	}
	return slices.Equal(l.ctypes, l.ptypes)
}

// insertSelfLinks returns the foreign keys of table d onto itself.
func (e *Engine) insertSelfLinks(d *catalog.Descriptor) []fkLink {
	var out []fkLink
	for _, l := range e.fkLinks() {
		if l.child.ID == d.ID && l.parent.ID == d.ID {
			out = append(out, l)
		}
	}
	return out
}

// newBulkSelfRefs returns the check of links (d's onto itself) over the
// rows keys keeps, or nil when there are none.
func newBulkSelfRefs(keys *bulkKeys, links []fkLink, open func(n int) keySets) *bulkSelfRefs {
	if len(links) == 0 {
		return nil
	}
	return &bulkSelfRefs{keys: keys, links: links, missing: open(len(links)),
		pending: make([]int, len(links)), resolved: make([]int, len(links))}
}

func (r *bulkSelfRefs) close() { r.missing.Close() }

// batch checks the rows of a batch once keys has kept them (their
// primary keys among the kept ones).
func (r *bulkSelfRefs) batch(kept []exec.Change) error {
	ts := r.keys.ts
	for _, ch := range kept {
		r.own = appendPrimaryKey(r.own[:0], ts.key, ch.Row)
		for i := range r.links {
			if r.pending[i] == r.resolved[i] {
				continue
			}
			has, err := r.missing.Has(i, r.own)
			if err != nil {
				return err
			}
			if has {
				r.resolved[i]++
			}
		}
	}
	for _, ch := range kept {
		for i := range r.links {
			ok, err := r.present(i, ch.Row)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
			has, err := r.missing.Has(i, r.ref)
			if err != nil {
				return err
			}
			if has {
				continue
			}
			if err := r.missing.Add(i, r.ref); err != nil {
				return err
			}
			r.pending[i]++
		}
	}
	return nil
}

// present encodes into r.ref the key row references by link i and
// reports whether it is there already: NULL in a column (MATCH SIMPLE),
// the table holding it, or a row the statement kept.
func (r *bulkSelfRefs) present(i int, row types.Row) (bool, error) {
	l := &r.links[i]
	if meta.AnyNullAt(row, l.ccols) {
		return true, nil
	}
	r.ref = r.ref[:0]
	for _, at := range l.pkOrder {
		r.ref = exec.AppendKey(r.ref, row[l.ccols[at]])
	}
	if has, err := r.keys.seen.Has(0, r.ref); has || err != nil {
		return has, err
	}
	return r.keys.pk(r.ref)
}

// finish fails with 23503 when a key rows referenced never came; read
// hands the commit's data back, a batch at a time, to find such a row.
func (r *bulkSelfRefs) finish(ctx context.Context, read func(ctx context.Context, fn func([]exec.Change) error) error) error {
	for i := range r.links {
		if r.pending[i] == r.resolved[i] {
			continue
		}
		var found error
		err := read(ctx, func(changes []exec.Change) error {
			for _, ch := range changes {
				if found != nil {
					return meta.ErrStopReadBack
				}
				ok, err := r.present(i, ch.Row)
				if err != nil {
					return err
				}
				if !ok {
					found = fkMissing(r.links[i], ch.Row)
				}
			}
			return nil
		})
		if found != nil {
			return found
		}
		if err != nil {
			return err
		}
		l := r.links[i]
		return &sqlerr.Error{Code: sqlerr.ForeignKeyViolation,
			Message: fmt.Sprintf("insert or update on table \"%s\" violates foreign key constraint \"%s\"", l.child.Name, l.con.Name)}
	}
	return nil
}
