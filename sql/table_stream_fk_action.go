package sql

import (
	"slices"
	"sort"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
)

// The referential actions of a streaming DELETE (table_stream_fk.go) run
// per batch in fkRun, on the keys the batch removes: the child rows that
// reference them are found by an index on the referencing columns, or by
// streaming the child once per batch without one, and their changes,
// checked, go into the statement's commit (meta.BulkTxn over every table
// the actions may change) next to the batch's own. What is held is one
// batch of keys and the child rows that reference them.

// streamFKActionOK reports whether l's ON DELETE action (CASCADE, SET
// NULL or SET DEFAULT) can run a batch at a time: its child is a plain
// table with a primary key, and a SET NULL or SET DEFAULT leaves the
// child's primary key and unique keys alone, so that it removes no key
// and no value another row may take.
func streamFKActionOK(l fkLink) bool {
	c := l.child
	if len(c.PrimaryKey) == 0 || c.Mirror != "" || c.Envelope() != "" {
		return false
	}
	switch l.con.OnDelete {
	case "c":
		return true
	case "n", "d":
	default:
		return false
	}
	cols, err := c.Schema()
	if err != nil {
		return false
	}
	keys := [][]int{pkIndexes(c, cols)}
	for i := range c.Indexes {
		if !c.Indexes[i].Unique {
			continue
		}
		pos, ok := exec.IndexColumns(&c.Indexes[i], cols)
		if !ok {
			return false
		}
		keys = append(keys, pos)
	}
	for _, key := range keys {
		for _, k := range key {
			if slices.Contains(l.ccols, k) {
				return false
			}
		}
	}
	return true
}

// streamFKActions holds what a streaming DELETE's actions changed in the
// batch checked last, until it is published, and follows its SET DEFAULT
// actions across batches.
type streamFKActions struct {
	d       *catalog.Descriptor // the statement's table
	plan    streamFKPlan
	pending map[uint32][]exec.Change
	sets    []*streamFKDefault
	batches int
}

// streamFKDefault follows one SET DEFAULT action: the first batch whose
// changes it set to the default (fired) and the first that removed the
// default's key from the parent (removed), numbered from 1; 0 for none.
type streamFKDefault struct {
	l              fkLink
	fired, removed int
}

func newStreamFKActions(d *catalog.Descriptor, plan streamFKPlan) *streamFKActions {
	a := &streamFKActions{d: d, plan: plan}
	for _, l := range plan.links {
		if l.con.OnDelete == "d" && slices.ContainsFunc(plan.changed, func(t *catalog.Descriptor) bool { return t.ID == l.child.ID }) {
			a.sets = append(a.sets, &streamFKDefault{l: l})
		}
	}
	return a
}

// batch takes what r's run (a batch's) derived, by table, for publish,
// and follows the SET DEFAULT actions across batches. PostgreSQL runs the
// actions of the rows removed in their order, then checks the rows they
// wrote: a default's key removed after rows were set to it is a key still
// referenced (err), one removed before rows are set to it is a key not
// present (late, reported if nothing else fails).
func (a *streamFKActions) batch(r *fkRun, derived map[uint32][]exec.Change) (late, err error) {
	a.batches++
	for _, sd := range a.sets {
		fired := len(derived[sd.l.child.ID]) > 0
		if sd.fired == 0 && fired {
			sd.fired = a.batches
		}
		key, ok, err := sd.key(r)
		if err != nil || !ok {
			return nil, err
		}
		n := 0
		for _, ch := range r.changes[sd.l.parent.ID] {
			k, ok, err := fkKey(pick(ch.Row, sd.l.pcols), sd.l.ptypes)
			if err != nil {
				return nil, err
			}
			if ok && k == key {
				n += int(ch.Sign)
			}
		}
		if n < 0 && sd.removed == 0 {
			sd.removed = a.batches
		}
		defaults, err := r.defaultsOf(sd.l.child)
		if err != nil {
			return nil, err
		}
		switch {
		case n < 0 && sd.fired != 0 && sd.fired < a.batches:
			return nil, fkReferenced(sd.l, defaults)
		case fired && sd.removed != 0 && sd.removed < a.batches && late == nil:
			late = fkMissing(sd.l, defaults)
		}
	}
	a.pending = derived
	return late, nil
}

// key returns the default's referenced key; ok is false when it holds a
// NULL (it references nothing).
func (sd *streamFKDefault) key(r *fkRun) (string, bool, error) {
	defaults, err := r.defaultsOf(sd.l.child)
	if err != nil {
		return "", false, err
	}
	return fkKey(pick(defaults, sd.l.ccols), sd.l.ptypes)
}

// drop forgets the changes of the last batch: the statement fails.
func (a *streamFKActions) drop() { a.pending = nil }

// tables returns the tables the actions may change, for the commit:
// each one's log (locked by the write) and member columns.
func (a *streamFKActions) tables(sw *streamingWrite) ([]meta.BulkTable, error) {
	out := make([]meta.BulkTable, len(a.plan.changed))
	for i, t := range a.plan.changed {
		ts, err := sw.stateOf(t)
		if err != nil {
			return nil, err
		}
		if err := sw.e.tableFailure(t); err != nil {
			return nil, err
		}
		out[i] = meta.BulkTable{D: t, Log: sw.reads[t.ID], Members: memberColumns(t, ts.cols)}
	}
	return out, nil
}

// publish publishes the last batch's changes to the other tables into
// txn, whose tables after the first are those of tables.
func (a *streamFKActions) publish(txn *meta.BulkTxn) error {
	ids := make([]uint32, 0, len(a.pending))
	for id := range a.pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		chs := a.pending[id]
		// The statement's own table is the commit's first; the others
		// follow in the order of changed.
		at := slices.IndexFunc(a.plan.changed, func(t *catalog.Descriptor) bool { return t.ID == id }) + 1
		if at == 0 && (!a.plan.selfActs || id != a.d.ID) {
			continue
		}
		if len(chs) == 0 {
			continue
		}
		if err := txn.AddTo(at, exec.ChangelogOrder([][]exec.Change{chs})); err != nil {
			return err
		}
	}
	a.pending = nil
	return nil
}
