package sql

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
)

// A streaming UPDATE or DELETE of a table with foreign keys at either end
// checks them a batch at a time, against the other tables as they are:
// their logs are locked for the whole statement (streamingWrite). Each
// batch is checked exactly alone because a key the statement removes (a
// DELETE's) is removed in one batch only and stays removed to its end,
// and a row it writes references a key of a table the statement does not
// change. An UPDATE that moves the values other tables reference (its
// primary key, or UNIQUE columns) would break the first: a value let go
// in one batch may be taken in a later one. Its foreign keys into the
// table are checked over the whole statement instead
// (table_stream_fk_moves.go), in autocommit.
//
// The referential actions of a DELETE (ON DELETE CASCADE, SET NULL, SET
// DEFAULT) run per batch too, on the keys the batch removes, and their
// changes go into the same commit (table_stream_fk_action.go). That is
// exact when the tables the actions change form a tree below the table:
// each reached by one foreign key, that references its parent's primary
// key; a SET NULL or SET DEFAULT leaves the child's primary key and
// unique keys alone (so it removes no key itself); and no other foreign
// key links two of these tables. Then a row an action changes is changed
// by one batch only. A SET DEFAULT's default must be in its parent at the
// statement's end, which the batches cannot tell alone: finish checks it.
// An UPDATE removes no key, so the actions never run for it.
//
// A table referencing itself (NO ACTION or RESTRICT) is checked over the
// whole statement (table_stream_fk_self.go): a row still referencing a
// key the statement deleted fails only if the statement does not delete
// that row too, in any batch.
//
// A violation is reported at the end of the statement, as PostgreSQL
// checks its foreign keys and runs its actions after the statement's
// rows: an error of a later row comes first.

// streamFKPlan is how a streaming UPDATE or DELETE of table d enforces
// the foreign keys around it.
type streamFKPlan struct {
	// links are the foreign keys checked per batch: every one at either
	// end of d or of a table in changed, but self.
	links []fkLink
	// tables are the tables other than d the statement reads or changes,
	// sorted by id (the lock order).
	tables []*catalog.Descriptor
	// changed are the tables the actions may change, parents before
	// their children.
	changed []*catalog.Descriptor
	// acts: some link has an action.
	acts bool
	// self is d's reference to itself, if it has one and overlay is
	// false (with overlay it is one of links).
	self *fkLink
	// overlay: the tables the actions change do not form a tree below d
	// (table_stream_fk_action_overlay.go); selfActs: d is one of them.
	overlay, selfActs bool
}

// streamFKPlanFor returns the plan of table d (as the catalog has it);
// ok is false when its foreign keys cannot be enforced a batch at a time
// (above), and the statement takes the general path.
func (e *Engine) streamFKPlanFor(d *catalog.Descriptor) (p streamFKPlan, ok bool) {
	return e.streamFKPlanWith(d, false)
}

// streamFKPlanWith is streamFKPlanFor; byValue admits foreign keys that
// reference other columns than their table's primary key (but a table's
// reference to itself): right for a statement that takes no value of
// them a batch could see removed (a DELETE, an UPDATE that leaves them
// alone) or that checks the values it moves over the whole statement
// (streamFKMoves).
func (e *Engine) streamFKPlanWith(d *catalog.Descriptor, byValue bool) (p streamFKPlan, ok bool) {
	all := e.fkLinks()
	touched := map[uint32]bool{d.ID: true}
	queued := map[uint32]bool{d.ID: true}
	tree := map[int]bool{} // of all: the links the actions follow
	selfAt := -1           // of all: d's reference to itself
	// removing are the tables whose keys the statement may remove: d's
	// DELETE, and the CASCADE children's deletions.
	removing := []*catalog.Descriptor{d}
	for len(removing) > 0 {
		x := removing[0]
		removing = removing[1:]
		for i, l := range all {
			if l.parent.ID != x.ID {
				continue
			}
			if l.pkOrder == nil && (!byValue || l.child.ID == x.ID) {
				return p, false // a removed unique value may be taken again later
			}
			if fkRestricts(l.con.OnDelete) {
				if l.child.ID == x.ID && x.ID == d.ID {
					p.self, selfAt = &all[i], i
				}
				continue
			}
			if !streamFKActionOK(l) {
				return p, false
			}
			if touched[l.child.ID] {
				// Reached twice, or d itself: not a tree.
				p.overlay = true
			}
			touched[l.child.ID], tree[i], p.acts = true, true, true
			if l.child.ID == d.ID {
				p.selfActs = true
			} else if !slices.ContainsFunc(p.changed, func(t *catalog.Descriptor) bool { return t.ID == l.child.ID }) {
				p.changed = append(p.changed, l.child)
			}
			if l.con.OnDelete == "c" && !queued[l.child.ID] {
				queued[l.child.ID] = true
				removing = append(removing, l.child)
			}
		}
	}
	others := map[uint32]*catalog.Descriptor{}
	for i, l := range all {
		in, out := touched[l.child.ID], touched[l.parent.ID]
		switch {
		case !in && !out:
			continue
		case in && out && !tree[i] && i != selfAt:
			// Another foreign key between two of the tables the
			// statement changes (a restricting self-reference of a
			// child among them).
			p.overlay = true
		}
		p.links = append(p.links, l)
		for _, t := range []*catalog.Descriptor{l.child, l.parent} {
			if t.ID != d.ID {
				others[t.ID] = t
			}
		}
	}
	if !p.overlay {
		// d's reference to itself is checked over the statement by
		// streamFKSelf, not a batch at a time.
		p.links = slices.DeleteFunc(p.links, func(l fkLink) bool { return selfAt >= 0 && l.con.Name == all[selfAt].con.Name && l.child.ID == d.ID })
	} else {
		p.self = nil
		if !streamFKOverlayOK(d, p) {
			return p, false
		}
	}
	for _, t := range others {
		p.tables = append(p.tables, t)
	}
	slices.SortFunc(p.tables, func(a, b *catalog.Descriptor) int { return cmp.Compare(a.ID, b.ID) })
	return p, true
}

// streamFKLinks returns the foreign keys table d's streaming UPDATE or
// DELETE checks a batch at a time and the other tables it reads or
// changes (sorted by id); ok is false when it cannot stream
// (streamFKPlanFor).
func (e *Engine) streamFKLinks(d *catalog.Descriptor) (links []fkLink, tables []*catalog.Descriptor, ok bool) {
	return e.streamFKLinksWith(d, false)
}

// streamFKLinksWith is streamFKLinks with streamFKPlanWith's byValue.
func (e *Engine) streamFKLinksWith(d *catalog.Descriptor, byValue bool) (links []fkLink, tables []*catalog.Descriptor, ok bool) {
	p, ok := e.streamFKPlanWith(d, byValue)
	return p.links, p.tables, ok
}

// fkRestricts reports whether a foreign key action changes nothing: NO
// ACTION or RESTRICT.
func fkRestricts(action string) bool {
	return action == "" || action == "a" || action == "r"
}

// streamFK checks the foreign keys of one streaming UPDATE or DELETE and
// runs their actions.
type streamFK struct {
	d    *catalog.Descriptor
	plan streamFKPlan
	run  *fkRun
	// actions are the changes the actions make, batch by batch
	// (table_stream_fk_action.go); nil without actions.
	actions *streamFKActions
	// self checks the table's reference to itself; nil without one.
	self *streamFKSelf
	// moves checks the foreign keys into the table over a statement
	// that may change the values they reference (followMoves); nil
	// otherwise. runMoves is run without them, for an UPDATE's batches.
	moves    *streamFKMoves
	runMoves *fkRun
	// over reads the tables the actions change as the earlier batches
	// left them, when they are not a tree (useOverlay); nil otherwise.
	over *streamFKOverlay
	// violation is the first batch's error of a foreign key or of an
	// action's change, reported by finish; late is the first of a check
	// PostgreSQL makes after every action (a row an action wrote not
	// finding its key), reported when nothing else failed.
	violation, late error
}

// newStreamFK returns the check of table d's foreign keys (d as the
// catalog has it once its logs are locked) reading the tables through
// state (ts is d's), or nil when there are none. open makes key sets.
func (s *session) newStreamFK(d *catalog.Descriptor, ts *tableState, state func(*catalog.Descriptor) (*tableState, error), open func(n int) keySets) *streamFK {
	plan, ok := s.e.streamFKPlanFor(d)
	return s.streamFKOf(plan, ok, d, ts, state, open)
}

// newStreamFKFollowingMoves is newStreamFK for an autocommit statement:
// the foreign keys into d may reference other columns than its primary
// key, and an UPDATE's batches check them over the whole statement
// (streamFKMoves), so that it may move the values they reference.
func (s *session) newStreamFKFollowingMoves(d *catalog.Descriptor, ts *tableState, state func(*catalog.Descriptor) (*tableState, error), open func(n int) keySets) *streamFK {
	plan, ok := s.e.streamFKPlanWith(d, true)
	f := s.streamFKOf(plan, ok, d, ts, state, open)
	if f == nil {
		return nil
	}
	if f.moves = newStreamFKMoves(d, plan, state, open); f.moves != nil {
		var links []fkLink
		for _, l := range plan.links {
			if l.parent.ID != d.ID {
				links = append(links, l)
			}
		}
		f.runMoves = s.newInsertFK(links, state)
		f.runMoves.check = true // an UPDATE removes no key of another table
	}
	return f
}

// streamFKOf returns the check of table d's foreign keys following plan
// (ok: d's foreign keys can be checked a batch at a time), or nil.
func (s *session) streamFKOf(plan streamFKPlan, ok bool, d *catalog.Descriptor, ts *tableState, state func(*catalog.Descriptor) (*tableState, error), open func(n int) keySets) *streamFK {
	if !ok || len(plan.links) == 0 && plan.self == nil {
		return nil
	}
	f := &streamFK{d: d, plan: plan, run: s.newInsertFK(plan.links, state)}
	f.run.check = !plan.acts // no actions: every link restricts
	if plan.acts {
		f.actions = newStreamFKActions(d, plan)
	}
	if plan.self != nil {
		f.self = newStreamFKSelf(d, *plan.self, ts, open)
	}
	return f
}

// changesOthers reports whether the statement's actions may change other
// tables, so that its commit spans them.
func (f *streamFK) changesOthers() bool { return f != nil && f.actions != nil }

// close releases what the check holds.
func (f *streamFK) close() {
	if f != nil && f.self != nil {
		f.self.close()
	}
	if f != nil && f.moves != nil {
		f.moves.close()
	}
	if f != nil {
		f.over.close()
	}
}

// batch checks a batch of the statement's changes to the table: the rows
// it writes find their referenced keys, and no row references a key it
// deletes, once the actions have run. Once one has failed, the others
// are not checked.
func (f *streamFK) batch(ctx context.Context, changes []exec.Change) error {
	if f.violation != nil {
		return nil
	}
	r := f.run
	// An UPDATE's batch (a DELETE's has no insertion) leaves the foreign
	// keys into the table to moves.
	moving := f.moves != nil && !deletesOnly(changes)
	if moving {
		r = f.runMoves
	}
	clear(r.changes)
	clear(r.derived)
	r.deltas, r.overlays = nil, nil
	main := changes
	if f.over != nil {
		var err error
		if main, err = f.over.mainChanges(changes); err != nil {
			return err
		}
	}
	r.add(f.d, main)
	derived, err := r.run(ctx)
	if err == nil && moving {
		err = f.moves.batch(ctx, changes)
	}
	if err == nil && f.self != nil {
		err = f.self.batch(ctx, r, changes)
	}
	var late error
	if err == nil && f.actions != nil {
		late, err = f.actions.batch(r, derived)
	}
	if f.actions != nil && err != nil && deletesOnly(changes) && isFKMissing(err) {
		// Only an action's rows are inserted.
		late, err = err, nil
	}
	if f.late == nil {
		f.late = late
	}
	if f.actions != nil && (f.late != nil || err != nil) {
		f.actions.drop() // the statement fails: nothing more to publish
	}
	if err == nil && f.late == nil && f.over != nil {
		err = f.over.record(main, derived)
	}
	if se, ok := err.(*sqlerr.Error); ok && (se.Code == sqlerr.ForeignKeyViolation || f.actions != nil) {
		// An action's change fails as PostgreSQL's would at the end of
		// the statement.
		f.violation = err
		return nil
	}
	return err
}

// deletesOnly reports whether changes delete rows only.
func deletesOnly(changes []exec.Change) bool {
	return !slices.ContainsFunc(changes, func(ch exec.Change) bool { return ch.Sign > 0 })
}

// isFKMissing reports whether err is fkMissing's: a row inserted whose
// referenced key is not there.
func isFKMissing(err error) bool {
	se, ok := err.(*sqlerr.Error)
	return ok && se.Code == sqlerr.ForeignKeyViolation && strings.HasPrefix(se.Message, fkMissingPrefix)
}

// finish returns the first violation, or one the whole statement tells.
func (f *streamFK) finish(ctx context.Context) error {
	if f.violation != nil {
		return f.violation
	}
	if f.self != nil {
		if err := f.self.finish(ctx); err != nil {
			return err
		}
	}
	if f.moves != nil {
		if err := f.moves.finish(ctx); err != nil {
			return err
		}
	}
	if f.over != nil {
		if err := f.over.finish(ctx); err != nil {
			return err
		}
	}
	return f.late
}

// published returns the checked batch's changes to the table as they
// are published: batch, or, through an overlay, without the rows an
// earlier batch's actions deleted (published once, by the action).
func (f *streamFK) published(batch []exec.Change) []exec.Change {
	if f == nil || f.over == nil || f.over.out == nil {
		return batch
	}
	out := f.over.out
	f.over.out = nil
	return out
}
