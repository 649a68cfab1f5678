package sql

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Foreign keys are enforced per statement, as PostgreSQL enforces
// non-deferrable ones: after the statement's changes and the referential
// actions they set off (CASCADE, SET NULL, SET DEFAULT, which change the
// referencing tables in the same statement), every row the statement
// inserted must find its referenced key, and no row may still reference a
// key the statement removed (NO ACTION, RESTRICT). A transaction's
// statements are checked against its snapshot; its COMMIT checks all its
// changes again, without actions, against the tables as they are then,
// holding the locks of every table linked to the ones it writes by a
// foreign key. So a child inserted by one transaction and its parent
// deleted by another cannot both commit: the later commit sees the
// earlier one and fails with 23503. An autocommit statement on a linked
// table runs the same way under those locks. Rows whose referencing
// columns hold a NULL reference nothing (MATCH SIMPLE).

// fkLink is one foreign key: constraint con of table child referencing
// table parent.
type fkLink struct {
	child, parent *catalog.Descriptor
	con           catalog.Constraint
	ccols, pcols  []int // column indexes in child and parent
	ctypes        []types.Type
	ptypes        []types.Type
	// pkOrder, when the referenced columns are the parent's primary key,
	// gives for each key column its place among them; nil otherwise.
	pkOrder []int
}

// fkLinks returns the foreign keys of the catalog, as of now.
func (e *Engine) fkLinks() []fkLink {
	type pair struct {
		child, parent *catalog.Descriptor
		con           catalog.Constraint
	}
	var pairs []pair
	e.catMu.RLock()
	for _, d := range e.objs {
		if d.Kind != catalog.KindTable {
			continue
		}
		for _, c := range d.Constraints {
			if p, ok := e.objs[c.RefTable]; ok && c.Type == "f" && p.Kind == catalog.KindTable {
				pairs = append(pairs, pair{d, p, c})
			}
		}
	}
	e.catMu.RUnlock()
	var out []fkLink
	for _, x := range pairs {
		if l, err := newFKLink(x.child, x.parent, x.con); err == nil {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].child.ID != out[j].child.ID {
			return out[i].child.ID < out[j].child.ID
		}
		return out[i].con.Name < out[j].con.Name
	})
	return out
}

func newFKLink(child, parent *catalog.Descriptor, c catalog.Constraint) (fkLink, error) {
	l := fkLink{child: child, parent: parent, con: c}
	ccols, err := child.Schema()
	if err != nil {
		return l, err
	}
	pcols, err := parent.Schema()
	if err != nil {
		return l, err
	}
	for i := range c.Columns {
		ci, pi := columnIndex(ccols, c.Columns[i]), columnIndex(pcols, c.RefColumns[i])
		if ci < 0 || pi < 0 {
			return l, fmt.Errorf("foreign key %s names a missing column", c.Name)
		}
		l.ccols, l.pcols = append(l.ccols, ci), append(l.pcols, pi)
		l.ctypes, l.ptypes = append(l.ctypes, ccols[ci].Type), append(l.ptypes, pcols[pi].Type)
	}
	if len(parent.PrimaryKey) == len(c.RefColumns) {
		order := make([]int, len(parent.PrimaryKey))
		for j, k := range parent.PrimaryKey {
			if order[j] = slices.Index(c.RefColumns, k); order[j] < 0 {
				order = nil
				break
			}
		}
		l.pkOrder = order
	}
	return l, nil
}

// fkRelated returns the tables linked to the tables ids by foreign keys,
// directly or through others (ids included), sorted by id; nil when none
// of them has a foreign key or is referenced by one.
func fkRelated(links []fkLink, ids []uint32) []*catalog.Descriptor {
	byID := map[uint32]*catalog.Descriptor{}
	seen := map[uint32]bool{}
	queue := append([]uint32(nil), ids...)
	for _, id := range ids {
		seen[id] = true
	}
	found := false
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, l := range links {
			var other *catalog.Descriptor
			switch {
			case l.child.ID == id:
				other = l.parent
			case l.parent.ID == id:
				other = l.child
			default:
				continue
			}
			found = true
			byID[l.child.ID], byID[l.parent.ID] = l.child, l.parent
			if !seen[other.ID] {
				seen[other.ID] = true
				queue = append(queue, other.ID)
			}
		}
	}
	if !found {
		return nil
	}
	out := make([]*catalog.Descriptor, 0, len(byID))
	for _, d := range byID {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// fkRun enforces the foreign keys of one statement or one commit.
type fkRun struct {
	s     *session
	links []fkLink
	// state returns a table as the statement or commit found it, before
	// its changes.
	state func(d *catalog.Descriptor) (*tableState, error)
	// check: a COMMIT's check, with no actions (they ran at each
	// statement); every action is then NO ACTION.
	check bool
	// deferring: a transaction's statement, whose deferred foreign keys
	// are checked at its COMMIT only (their actions still run).
	deferring bool
	// later, when set, takes a row found referencing a key the changes
	// removed and reports whether it is checked later instead (a
	// streaming statement whose later batches may still change it:
	// table_stream_fk_action_overlay.go).
	later func(l fkLink, row types.Row) (bool, error)

	descs   map[uint32]*catalog.Descriptor
	changes map[uint32][]exec.Change // the statement's or commit's, in order
	derived map[uint32][]exec.Change // what the actions added
	deltas  map[string]fkDelta       // parentDelta's, by foreign key
	// overlays: each table's rows its changes so far touch (overlay).
	overlays map[uint32]*fkOverlay
	// defaults: each table's column defaults, evaluated once (defaultsOf).
	defaults map[uint32][]types.Datum
}

func (f *fkRun) add(d *catalog.Descriptor, chs []exec.Change) {
	f.descs[d.ID] = d
	f.changes[d.ID] = append(f.changes[d.ID], chs...)
}

// removedKeys returns the referenced keys of l that the changes to l's
// parent removed (held before, not after), in the order the changes
// removed them, each with the row that replaced it when an UPDATE changed
// the key (nil for a DELETE).
func (f *fkRun) removedKeys(ctx context.Context, l fkLink, chs []exec.Change) ([]string, map[string]types.Row, error) {
	delta := map[string]int{}
	var order []string
	replaced := map[string]types.Row{}
	for i, ch := range chs {
		k, ok, err := fkKey(pick(ch.Row, l.pcols), l.ptypes)
		if err != nil || !ok {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		if _, seen := delta[k]; !seen {
			order = append(order, k)
		}
		delta[k] += int(ch.Sign)
		// An UPDATE's changes come as deletion, insertion pairs.
		if ch.Sign < 0 && i+1 < len(chs) && chs[i+1].Sign > 0 {
			replaced[k] = chs[i+1].Row
		}
	}
	var less []string
	for _, k := range order {
		if delta[k] < 0 {
			less = append(less, k)
		}
	}
	if len(less) == 0 {
		return nil, nil, nil
	}
	// Gone unless another row still holds it afterwards.
	held, err := f.parentHolds(ctx, l, less)
	if err != nil {
		return nil, nil, err
	}
	var gone []string
	out := map[string]types.Row{}
	for _, k := range less {
		if !held[k] {
			gone = append(gone, k)
			out[k] = replaced[k]
		}
	}
	return gone, out, nil
}

// run enforces the foreign keys over the changes added, returning the
// changes the referential actions make, by table.
func (f *fkRun) run(ctx context.Context) (map[uint32][]exec.Change, error) {
	// A statement that only deletes has its removed keys checked before
	// the rows its actions wrote, as PostgreSQL fires the triggers of the
	// rows deleted before the checks its actions queue.
	deletesOnly := !f.check
	for _, chs := range f.changes {
		if slices.ContainsFunc(chs, func(ch exec.Change) bool { return ch.Sign > 0 }) {
			deletesOnly = false
		}
	}
	if !f.check {
		if err := f.actions(ctx); err != nil {
			return nil, err
		}
	}
	if deletesOnly {
		if err := f.checkRemoved(ctx); err != nil {
			return nil, err
		}
	}
	if err := f.checkInsertedRefs(ctx); err != nil {
		return nil, err
	}
	if !deletesOnly {
		if err := f.checkRemoved(ctx); err != nil {
			return nil, err
		}
	}
	out := map[uint32][]exec.Change{}
	for id, chs := range f.derived {
		out[id] = netChanges(chs)
	}
	return out, nil
}

// checkInsertedRefs fails with 23503 for the first row inserted (and not
// deleted again by an action) that does not find its key.
func (f *fkRun) checkInsertedRefs(ctx context.Context) error {
	for _, l := range f.links {
		if f.deferring && f.s.deferred(l.con) {
			continue
		}
		var keys []string
		var rows []types.Row
		for _, ch := range netChanges(f.changes[l.child.ID]) {
			if ch.Sign < 0 {
				continue
			}
			k, ok, err := fkKey(pick(ch.Row, l.ccols), l.ptypes)
			if err != nil {
				return err
			}
			if ok {
				keys, rows = append(keys, k), append(rows, ch.Row)
			}
		}
		if err := f.checkReferences(ctx, l, keys, rows); err != nil {
			return err
		}
	}
	return nil
}

// checkRemoved fails with 23503 for the first key removed that a row
// still references.
func (f *fkRun) checkRemoved(ctx context.Context) error {
	for _, l := range f.links {
		if f.deferring && f.s.deferred(l.con) {
			continue
		}
		chs := f.changes[l.parent.ID]
		if len(chs) == 0 {
			continue
		}
		order, removed, err := f.removedKeys(ctx, l, chs)
		if err != nil || len(removed) == 0 {
			if err != nil {
				return err
			}
			continue
		}
		rows, err := f.childRows(ctx, l, removed)
		if err != nil {
			return err
		}
		if f.later != nil {
			rows, err = f.notLater(l, rows)
			if err != nil {
				return err
			}
		}
		// The first key removed that a row still references is named.
		byKey := map[string]types.Row{}
		for _, r := range rows {
			if k, ok, err := fkKey(pick(r, l.ccols), l.ptypes); err != nil {
				return err
			} else if _, seen := byKey[k]; ok && !seen {
				byKey[k] = r
			}
		}
		for _, k := range order {
			if r, ok := byKey[k]; ok {
				return fkReferenced(l, r)
			}
		}
	}
	return nil
}

// notLater returns the rows of l's child that f.later does not take.
func (f *fkRun) notLater(l fkLink, rows []types.Row) ([]types.Row, error) {
	var out []types.Row
	for _, r := range rows {
		later, err := f.later(l, r)
		if err != nil {
			return nil, err
		}
		if !later {
			out = append(out, r)
		}
	}
	return out, nil
}

// checkReferences fails with 23503 for the first of rows (inserted into
// l's child, keys their referenced keys) whose key l's parent does not
// hold after the changes.
func (f *fkRun) checkReferences(ctx context.Context, l fkLink, keys []string, rows []types.Row) error {
	if len(keys) == 0 {
		return nil
	}
	held, err := f.parentHolds(ctx, l, keys)
	if err != nil {
		return err
	}
	for i, k := range keys {
		if !held[k] {
			return fkMissing(l, rows[i])
		}
	}
	return nil
}

// childRows returns the rows of l's child, after the changes so far,
// that reference one of the keys removed.
func (f *fkRun) childRows(ctx context.Context, l fkLink, removed map[string]types.Row) ([]types.Row, error) {
	keys := make(map[string]bool, len(removed))
	for k := range removed {
		keys[k] = true
	}
	return f.rowsWithKeys(ctx, l.child, l.ccols, l.ptypes, keys)
}

// actions runs the CASCADE, SET NULL and SET DEFAULT actions of the keys
// the changes remove, then of the keys those actions remove, until they
// change nothing more.
func (f *fkRun) actions(ctx context.Context) error {
	done := map[uint32]int{} // changes of each table already acted on
	for round := 0; ; round++ {
		if round > 1000 {
			return sqlerr.New(sqlerr.ProgramLimitExceeded, "referential actions did not come to an end after 1000 rounds")
		}
		upto := map[uint32]int{}
		for id, chs := range f.changes {
			upto[id] = len(chs)
		}
		more := false
		for _, l := range f.links {
			id := l.parent.ID
			if upto[id] <= done[id] {
				continue
			}
			_, removed, err := f.removedKeys(ctx, l, f.changes[id][done[id]:upto[id]])
			if err != nil || len(removed) == 0 {
				if err != nil {
					return err
				}
				continue
			}
			derived, err := f.act(ctx, l, removed)
			if err != nil {
				return err
			}
			if len(derived) > 0 {
				more = true
				f.add(l.child, derived)
				f.derived[l.child.ID] = append(f.derived[l.child.ID], derived...)
			}
		}
		done = upto
		if !more {
			return nil
		}
	}
}

// act returns the changes l's actions make to the child rows that
// reference the keys removed.
func (f *fkRun) act(ctx context.Context, l fkLink, removed map[string]types.Row) ([]exec.Change, error) {
	rows, err := f.childRows(ctx, l, removed)
	if err != nil {
		return nil, err
	}
	var out []exec.Change
	var defaults []types.Datum
	for _, r := range rows {
		k, ok, err := fkKey(pick(r, l.ccols), l.ptypes)
		if err != nil {
			return nil, err
		}
		newParent, gone := removed[k]
		if !ok || !gone {
			continue
		}
		action := l.con.OnDelete
		if newParent != nil {
			action = l.con.OnUpdate
		}
		next := slices.Clone(r)
		switch action {
		case "c":
			if newParent == nil {
				out = append(out, exec.Change{Row: r, Sign: exec.Delete})
				continue
			}
			for i, c := range l.ccols {
				if next[c], err = expr.CastDatum(newParent[l.pcols[i]], l.ctypes[i]); err != nil {
					return nil, err
				}
			}
		case "n":
			for _, c := range l.ccols {
				next[c] = types.Null
			}
		case "d":
			if defaults == nil {
				if defaults, err = f.defaultsOf(l.child); err != nil {
					return nil, err
				}
			}
			for _, c := range l.ccols {
				next[c] = defaults[c]
			}
		default:
			continue // NO ACTION, RESTRICT: checked once the actions are done
		}
		out = append(out, exec.Change{Row: r, Sign: exec.Delete}, exec.Change{Row: next, Sign: exec.Insert})
	}
	if len(out) > 0 {
		cols, err := l.child.Schema()
		if err != nil {
			return nil, err
		}
		if err := checkTableChanges(l.child, cols, out, func([]byte) (bool, error) { return false, nil }); err != nil {
			return nil, err
		}
		if err := checkRows(l.child, cols, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// defaultsOf returns table d's column defaults (defaultValues), evaluated
// once for the run: a streaming statement's batches all set the same.
func (f *fkRun) defaultsOf(d *catalog.Descriptor) ([]types.Datum, error) {
	if v, ok := f.defaults[d.ID]; ok {
		return v, nil
	}
	v, err := f.s.defaultValues(d)
	if err != nil {
		return nil, err
	}
	if f.defaults == nil {
		f.defaults = map[uint32][]types.Datum{}
	}
	f.defaults[d.ID] = v
	return v, nil
}

// defaultValues evaluates table d's column defaults once (NULL for a
// column without one).
func (s *session) defaultValues(d *catalog.Descriptor) ([]types.Datum, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	defs, err := s.columnDefaults(d, cols)
	if err != nil {
		return nil, err
	}
	out := make([]types.Datum, len(cols))
	for i, e := range defs {
		out[i] = types.Null
		if e == nil {
			continue
		}
		if out[i], err = e.Eval(nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func fkColumnsText(names []string, row types.Row, cols []int, ts []types.Type) (string, string) {
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = types.FormatText(row[c], ts[i])
	}
	return strings.Join(names, ", "), strings.Join(vals, ", ")
}

// fkMissingPrefix begins fkMissing's message.
const fkMissingPrefix = "insert or update on table "

// fkMissing is PostgreSQL's 23503 for a row whose referenced key is not
// there.
func fkMissing(l fkLink, row types.Row) error {
	names, vals := fkColumnsText(l.con.Columns, row, l.ccols, l.ctypes)
	return &sqlerr.Error{Code: sqlerr.ForeignKeyViolation,
		Message: fmt.Sprintf(fkMissingPrefix+"\"%s\" violates foreign key constraint \"%s\"", l.child.Name, l.con.Name),
		Detail:  fmt.Sprintf("Key (%s)=(%s) is not present in table \"%s\".", names, vals, l.parent.Name)}
}

// fkReferenced is PostgreSQL's 23503 for a removed key a row still
// references.
func fkReferenced(l fkLink, child types.Row) error {
	vals := make([]string, len(l.ccols))
	for i, c := range l.ccols {
		vals[i] = types.FormatText(child[c], l.ptypes[i])
	}
	return &sqlerr.Error{Code: sqlerr.ForeignKeyViolation,
		Message: fmt.Sprintf("update or delete on table \"%s\" violates foreign key constraint \"%s\" on table \"%s\"", l.parent.Name, l.con.Name, l.child.Name),
		Detail:  fmt.Sprintf("Key (%s)=(%s) is still referenced from table \"%s\".", strings.Join(l.con.RefColumns, ", "), strings.Join(vals, ", "), l.child.Name)}
}

// fkLinked returns the foreign keys of the catalog and the tables linked
// by them to the tables ds (nil when none is linked).
func (e *Engine) fkLinked(ds []*catalog.Descriptor) ([]fkLink, []*catalog.Descriptor) {
	links := e.fkLinks()
	if len(links) == 0 {
		return nil, nil
	}
	ids := make([]uint32, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return links, fkRelated(links, ids)
}

// enforceForeignKeys runs the foreign keys of a commit over linked tables,
// holding the logs of tables (every table linked to those it writes).
// An autocommit statement (a write with compute) is computed here and
// its referential actions added to the tables they change; a
// transaction's changes are checked again without actions (from the
// spill when some of them spilled: checkBlockForeignKeys).
func (s *session) enforceForeignKeys(ctx context.Context, tables []*tableWrite, logs []*meta.TableLog, links []fkLink) error {
	if slices.ContainsFunc(tables, func(w *tableWrite) bool { return w.spill != nil }) {
		return s.checkBlockForeignKeys(ctx, tables, logs, links)
	}
	e := s.e
	states := map[uint32]*tableState{}
	defer func() {
		for _, ts := range states {
			ts.Close()
		}
	}()
	logOf := map[uint32]*meta.TableLog{}
	for i, w := range tables {
		logOf[w.d.ID] = logs[i]
		if err := e.ensureCurrent(ctx, w.d, logs[i]); err != nil {
			return err
		}
	}
	f := &fkRun{s: s, links: links, check: true, descs: map[uint32]*catalog.Descriptor{},
		changes: map[uint32][]exec.Change{}, derived: map[uint32][]exec.Change{}}
	f.state = func(d *catalog.Descriptor) (*tableState, error) {
		if ts, ok := states[d.ID]; ok {
			return ts, nil
		}
		log, ok := logOf[d.ID]
		if !ok {
			return nil, sqlerr.New(sqlerr.SerializationFailure, "table %q was linked by a foreign key while this commit ran", d.Name).
				WithHint("Retry the transaction.")
		}
		ts, err := e.openTableState(d, log)
		if err != nil {
			return nil, err
		}
		states[d.ID] = ts
		return ts, nil
	}
	for _, w := range tables {
		switch {
		case w.compute != nil:
			f.check = false
			ts, err := f.state(w.d)
			if err != nil {
				return err
			}
			changes, err := w.compute(ctx, ts)
			if err != nil {
				return err
			}
			w.stmts, w.compute = [][]exec.Change{changes}, nil
			f.add(w.d, changes)
		case len(w.stmts) > 0:
			f.add(w.d, exec.ChangelogOrder(w.stmts))
		}
	}
	derived, err := f.run(ctx)
	if err != nil {
		return err
	}
	for _, w := range tables {
		if chs := derived[w.d.ID]; len(chs) > 0 {
			w.stmts = append(w.stmts, chs)
		}
	}
	return nil
}

// txForeignKeys runs the foreign keys of a transaction's statement
// (changes to d) against the transaction's view of the tables before it,
// and returns the changes its referential actions make, by table, for the
// transaction to add after the statement's own.
func (s *session) txForeignKeys(ctx context.Context, snap *meta.TxSnapshot, d *catalog.Descriptor, changes []exec.Change) ([]*tableWrite, error) {
	links, related := s.e.fkLinked([]*catalog.Descriptor{d})
	if related == nil {
		return nil, nil
	}
	f := &fkRun{s: s, links: links, deferring: true, descs: map[uint32]*catalog.Descriptor{},
		changes: map[uint32][]exec.Change{}, derived: map[uint32][]exec.Change{}}
	states := map[uint32]*tableState{}
	f.state = func(x *catalog.Descriptor) (*tableState, error) {
		if ts, ok := states[x.ID]; ok {
			return ts, nil
		}
		// Not closed: the snapshot is the transaction's.
		ts, err := s.txTableState(snap, x)
		if err == nil {
			states[x.ID] = ts
		}
		return ts, err
	}
	f.add(d, changes)
	derived, err := f.run(ctx)
	if err != nil {
		return nil, err
	}
	var out []*tableWrite
	for _, x := range related {
		if chs := derived[x.ID]; len(chs) > 0 {
			out = append(out, &tableWrite{d: f.descs[x.ID], stmts: [][]exec.Change{chs}})
		}
	}
	return out, nil
}
