package sql

import (
	"context"
	"encoding/binary"
	"slices"
	"sort"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/types"
)

// A streaming DELETE whose ON DELETE actions change tables that do not
// form a tree below it (a table reached by two foreign keys or two
// paths, a table referencing itself with an action, a cycle, another
// foreign key between two of the tables changed) cannot check a batch
// alone: a row an action changes in one batch may be reached again by a
// later batch, through another path or as a row the statement's WHERE
// meets later, and a row left referencing a key one batch removed may be
// deleted by a later batch. So the statement reads the tables it changes
// as its earlier batches left them: their changes so far (the
// statement's own rows and what the actions derived) go to a scratch
// store on disk, kept as a transaction block's spill is (blockSpill: by
// row identity and by the values the foreign keys look rows up by), and
// the batch's fkRun reads each of these tables through it. Then:
//
//   - an action never acts on a row twice: a row an earlier batch
//     deleted is not there, one it set to NULL is read as it is now;
//   - a row of the statement's table that the WHERE meets after an
//     action deleted it is counted and returned (PostgreSQL deletes it
//     before its actions run) but not deleted again, and one an action
//     changed is deleted as it is now;
//   - a row found still referencing a key the batch removed, in a table
//     a later batch may still change, is not an error yet: its identity
//     goes to the scratch store (pending), and finish reads each pending
//     row again once the statement is done: a violation if it is still
//     there referencing a key that is gone. Elsewhere a referencing row
//     stays, and the batch fails as before.
//
// What is held in memory is still one batch and the rows its actions
// change; what the statement changed so far is on disk. SET DEFAULT in
// such a graph holds its rows (streamFKOverlayOK): whether its default's
// key is removed before or after rows are set to it depends on the
// order of the batches.

// streamFKOverlayOK reports whether plan, whose actions do not form a
// tree below d, can stream through an overlay: it has actions (two
// references of d to itself alone are checked as a whole), and no SET
// DEFAULT action.
func streamFKOverlayOK(d *catalog.Descriptor, p streamFKPlan) bool {
	if !p.acts {
		return false
	}
	changed := func(id uint32) bool {
		return id == d.ID || slices.ContainsFunc(p.changed, func(t *catalog.Descriptor) bool { return t.ID == id })
	}
	for _, l := range p.links {
		if l.con.OnDelete == "d" && changed(l.parent.ID) {
			return false
		}
	}
	return true
}

// streamFKOverlay is the statement's changes so far to the tables it
// changes, on disk, and the reads of those tables through them.
type streamFKOverlay struct {
	d      *catalog.Descriptor
	bs     *blockSpill
	spills map[uint32]*tableSpill
	// states read each table changed through its spill; own is d's,
	// opened for the overlay (the statement's own iterator reads d as it
	// was).
	states map[uint32]*tableState
	own    *tableState
	links  []fkLink
	// pending counts the rows noted to be read again at finish.
	pending int
	// out is the last batch's changes to d as they are published, set by
	// mainChanges.
	out []exec.Change
}

// Scratch key prefix of the pending rows: 'P' link identity.
const overlayPendingPrefix = 'P'

// useOverlay makes f read the tables its actions change through an
// overlay of the statement's changes so far, when its plan needs one.
// base reads a table as it was; the write's log locks cover them all.
func (f *streamFK) useOverlay(sw *streamingWrite, base func(*catalog.Descriptor) (*tableState, error)) error {
	if f == nil || !f.plan.overlay {
		return nil
	}
	db, err := sw.e.openScratch()
	if err != nil {
		return err
	}
	o := &streamFKOverlay{d: f.d, bs: &blockSpill{db: db}, spills: map[uint32]*tableSpill{},
		states: map[uint32]*tableState{}, links: f.plan.links}
	f.over = o
	own, err := sw.e.openTableState(sw.d, sw.log)
	if err != nil {
		return err
	}
	o.own = own
	for _, t := range append([]*catalog.Descriptor{f.d}, f.plan.changed...) {
		ts := own
		if t.ID != f.d.ID {
			if ts, err = base(t); err != nil {
				return err
			}
		}
		sp := &tableSpill{s: o.bs, id: t.ID, ncols: len(ts.cols), key: ts.key}
		sp.sets = sw.e.spillValueSets(sw.e.current(t), ts.cols)
		ts.setSpill(sp)
		o.spills[t.ID], o.states[t.ID] = sp, ts
	}
	f.run.state = func(t *catalog.Descriptor) (*tableState, error) {
		if ts, ok := o.states[t.ID]; ok {
			return ts, nil
		}
		return base(t)
	}
	f.run.later = o.later
	return nil
}

func (o *streamFKOverlay) close() {
	if o == nil {
		return
	}
	for id, ts := range o.states {
		if id != o.d.ID {
			ts.setSpill(nil)
		}
	}
	if o.own != nil {
		o.own.Close()
	}
	o.bs.db.Close()
}

// mainChanges returns the batch's changes to d as they apply after the
// earlier batches: a row deleted by an earlier batch's action is left
// out, one an action changed is deleted as it is now.
func (o *streamFKOverlay) mainChanges(changes []exec.Change) ([]exec.Change, error) {
	sp := o.spills[o.d.ID]
	out := make([]exec.Change, 0, len(changes))
	for i, ch := range changes {
		if ch.Sign > 0 || i+1 < len(changes) && changes[i+1].Sign > 0 {
			out = append(out, ch) // an UPDATE's pair: no action ran
			continue
		}
		now, ok, err := sp.newest(rowKey(sp.key, ch.Row))
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
			out = append(out, ch)
		case now.Sign > 0:
			out = append(out, exec.Change{Row: now.Row, Sign: exec.Delete})
		}
	}
	o.out = out
	return out, nil
}

// record appends a checked batch's changes to d (main) and the actions'
// changes (derived, by table) to the overlay.
func (o *streamFKOverlay) record(main []exec.Change, derived map[uint32][]exec.Change) error {
	if len(main) > 0 && deletesOnly(main) {
		// An UPDATE's batches remove no key: no action runs, and no
		// later batch reads what they changed.
		if err := o.spills[o.d.ID].append(exec.ChangelogOrder([][]exec.Change{main})); err != nil {
			return err
		}
	}
	ids := make([]uint32, 0, len(derived))
	for id := range derived {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		sp, ok := o.spills[id]
		if !ok || len(derived[id]) == 0 {
			continue
		}
		if err := sp.append(derived[id]); err != nil {
			return err
		}
	}
	return nil
}

// later notes row, of l's child, found referencing a key the batch
// removed, to be read again at finish when a later batch may still
// change it (its table is one the statement changes); false otherwise.
func (o *streamFKOverlay) later(l fkLink, row types.Row) (bool, error) {
	sp, ok := o.spills[l.child.ID]
	if !ok {
		return false, nil
	}
	at := slices.IndexFunc(o.links, func(x fkLink) bool { return x.child.ID == l.child.ID && x.con.Name == l.con.Name })
	if at < 0 {
		return false, nil
	}
	k := binary.BigEndian.AppendUint32([]byte{overlayPendingPrefix}, uint32(at))
	k = append(k, rowKey(sp.key, row)...)
	err := o.bs.db.Write(func(set func(k, v []byte), _ func(k []byte)) { set(k, nil) })
	if err == nil {
		o.pending++
	}
	return true, err
}

// finish fails with 23503 when a pending row is still there, once the
// statement is done, referencing a key that is gone.
func (o *streamFKOverlay) finish(ctx context.Context) error {
	if o.pending == 0 {
		return nil
	}
	lo := []byte{overlayPendingPrefix}
	var found error
	err := o.bs.db.Scan(lo, prefixEnd(lo), false, func(k, _ []byte) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		l := o.links[binary.BigEndian.Uint32(k[1:5])]
		child := o.states[l.child.ID]
		row, err := child.Lookup(k[5:])
		if err != nil || row == nil {
			return err == nil, err
		}
		key, ok, err := fkKey(pick(row, l.ccols), l.ptypes)
		if err != nil || !ok {
			return err == nil, err
		}
		if !sort.IntsAreSorted(l.pkOrder) {
			if key, err = reorderKey(key, l.pkOrder); err != nil {
				return false, err
			}
		}
		parent, ok := o.states[l.parent.ID]
		if !ok {
			return true, nil // a table the statement does not change keeps its keys
		}
		held, err := parent.Lookup([]byte(key))
		if err != nil {
			return false, err
		}
		if held == nil {
			found = fkReferenced(l, row)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return found
}
