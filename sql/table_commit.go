package sql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A commit's changes are computed and checked here, under the locks of
// the tables' logs; meta.Tables publishes them (meta/table_publish.go
// says how each kind of commit lands whole or not at all).

// tableWrite is what one commit writes to one table.
type tableWrite struct {
	d *catalog.Descriptor
	// stmts holds each statement's changes, in order (a transaction's).
	stmts [][]exec.Change
	// compute, when set, computes a single statement's changes under the
	// table's lock from its current state and checks them itself (an
	// autocommit statement); stmts is then ignored.
	compute func(ctx context.Context, ts *tableState) ([]exec.Change, error)
	// spill, when not nil, holds a transaction's statements before those
	// in stmts on disk (block_spill.go); memBytes estimates what stmts
	// hold.
	spill    *tableSpill
	memBytes int64
	// insertsOnly: compute makes insertions only (an INSERT without ON
	// CONFLICT), so a table that only other tables reference is committed
	// by group commit (insertsIntoParent).
	insertsOnly bool
}

// streamWrite is what one commit inserts into one stream: one JSON
// message per row.
type streamWrite struct {
	d    *catalog.Descriptor
	msgs [][]byte
	// spill, when not nil, holds a transaction's rows before those in
	// msgs on disk (block_spill_streams.go); memBytes estimates what
	// msgs hold.
	spill    *streamSpill
	memBytes int64
}

// commitWrites publishes one commit: its tables' changes, checked under
// the tables' locks against their current contents, and its stream rows.
// It returns once JetStream has acknowledged everything.
func (s *session) commitWrites(ctx context.Context, tables []*tableWrite, streams []*streamWrite) (err error) {
	e := s.e
	if err := e.checkWritable(); err != nil {
		return err
	}
	for _, w := range tables {
		if w.d.Mirror != "" && !s.mirrorWriter {
			return mirrorWriteError(w.d)
		}
		if w.d.Envelope() != "" {
			return envelopeWriteError(w.d)
		}
	}
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	for _, w := range tables {
		// A table whose unique or foreign keys changed since the block's
		// changes to it spilled is checked with them in memory.
		if err := s.unspillStale(w); err != nil {
			return err
		}
	}
	written := make([]*catalog.Descriptor, len(tables))
	for i, w := range tables {
		written[i] = w.d
	}
	links, linked := e.fkLinked(written)
	if len(tables) == 1 && len(streams) == 0 && tables[0].spill == nil && (linked == nil || insertsIntoParent(links, tables[0])) {
		return e.commitTable(ctx, tables[0])
	}
	// Every table linked by a foreign key is locked too (table_fk.go).
	for _, d := range linked {
		if !slices.ContainsFunc(tables, func(w *tableWrite) bool { return w.d.ID == d.ID }) {
			tables = append(tables, &tableWrite{d: d})
		}
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].d.ID < tables[j].d.ID })
	logs := make([]*meta.TableLog, len(tables))
	for i, w := range tables {
		if err := e.checkExists(w.d); err != nil {
			return err
		}
		logs[i] = e.tables.Log(w.d.ID)
		logs[i].Lock()
		defer logs[i].Unlock()
		// This commit is published outside the queue; what is queued goes
		// first.
		logs[i].WaitIdle()
	}
	if linked != nil {
		if err := s.enforceForeignKeys(ctx, tables, logs, links); err != nil {
			return err
		}
	}
	var parts []meta.TxnPart
	limit := e.tables.ChangelogLimit()
	for i, w := range tables {
		if w.spill != nil {
			part, ok, err := e.prepareSpilledCommit(ctx, w, logs[i])
			if err != nil {
				return err
			}
			if ok {
				parts = append(parts, part)
			}
			continue
		}
		changes, msgs, err := e.prepareTableCommit(ctx, w, logs[i])
		if err != nil {
			return err
		}
		if len(changes) > 0 {
			parts = append(parts, meta.TxnPart{D: w.d, Msgs: msgs, Log: logs[i], Changes: changes})
		}
	}
	for _, w := range streams {
		if w.rowCount() == 0 {
			continue
		}
		if se := e.streams.WriteError(w.d.JSStream, fmt.Sprintf("could not write to stream %q", w.d.Name)); se != nil {
			return se
		}
		if w.spill != nil {
			parts = append(parts, spilledStreamPart(w, limit))
			continue
		}
		for _, m := range w.msgs {
			if len(m) > limit {
				return streamRowTooLarge(w.d, len(m), limit)
			}
		}
		parts = append(parts, meta.TxnPart{D: w.d, Msgs: w.msgs})
	}
	return e.tables.Publish(parts)
}

// insertsIntoParent reports whether w only inserts rows into a table that
// has no foreign key of its own (others may reference it). Such a commit
// cannot break a foreign key nor set off an action, so it needs neither
// the locks of the tables linked to it nor a check, and goes through the
// table's group commit like a table without foreign keys. It stays exact
// against a concurrent write to a referencing table: that write locks
// this table's log and waits for its queue to be published (WaitIdle)
// before it reads the keys it references.
func insertsIntoParent(links []fkLink, w *tableWrite) bool {
	for _, l := range links {
		if l.child.ID == w.d.ID {
			return false
		}
	}
	if w.compute != nil {
		if !w.insertsOnly {
			return false
		}
		compute := w.compute
		w.compute = func(ctx context.Context, ts *tableState) ([]exec.Change, error) {
			changes, err := compute(ctx, ts)
			if err == nil && slices.ContainsFunc(changes, func(ch exec.Change) bool { return ch.Sign < 0 }) {
				return nil, sqlerr.New(sqlerr.InternalError, "an INSERT into table %q computed a deletion", w.d.Name)
			}
			return changes, err
		}
		return true
	}
	for _, stmt := range w.stmts {
		if slices.ContainsFunc(stmt, func(ch exec.Change) bool { return ch.Sign < 0 }) {
			return false
		}
	}
	return true
}

// commitTable commits changes to one table through its log's queue (group
// commit, meta.Tables.Commit).
func (e *Engine) commitTable(ctx context.Context, w *tableWrite) error {
	if err := e.checkExists(w.d); err != nil {
		return err
	}
	return e.tables.Commit(w.d, func(log *meta.TableLog) ([]exec.Change, [][]byte, error) {
		return e.prepareTableCommit(ctx, w, log)
	})
}

// checkExists fails if table d was dropped (or replaced) since the
// statement was bound.
func (e *Engine) checkExists(d *catalog.Descriptor) error {
	cur, ok := e.lookup(d.Name)
	if !ok || cur.ID != d.ID {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", d.Name)
	}
	if !sameTableColumns(cur, d) {
		return sqlerr.New(sqlerr.SerializationFailure, "table %q was altered after this transaction read it", d.Name).
			WithHint("Retry the transaction.")
	}
	return nil
}

// prepareTableCommit checks a table write against the table's current
// contents and encodes it as changelog messages (one unless it is larger
// than a message). Holding log.mu.
func (e *Engine) prepareTableCommit(ctx context.Context, w *tableWrite, log *meta.TableLog) ([]exec.Change, [][]byte, error) {
	// A table whose dataflow stopped would never show the write.
	if err := e.tableFailure(w.d); err != nil {
		return nil, nil, err
	}
	// The message is formatted only for a failed stream: this runs for
	// every write.
	if se := e.streams.WriteError(w.d.JSStream, ""); se != nil {
		if named := e.streams.WriteError(w.d.JSStream, fmt.Sprintf("could not write to table %q", w.d.Name)); named != nil {
			se = named
		}
		return nil, nil, se
	}
	if err := e.ensureCurrent(ctx, w.d, log); err != nil {
		return nil, nil, err
	}
	stmts, err := e.checkedChanges(ctx, w, log)
	if err != nil {
		return nil, nil, err
	}
	changes := exec.ChangelogOrder(stmts)
	if len(changes) == 0 {
		return nil, nil, nil
	}
	cols, err := w.d.Schema()
	if err != nil {
		return nil, nil, err
	}
	members := memberColumns(w.d, cols)
	encode := exec.EncodeChangelogChunks
	if slices.Equal(log.EncodedCols(), members) {
		encode = exec.EncodeChangelogChunksNamesChecked
	}
	msgs, err := encode(members, changes, e.tables.ChangelogLimit())
	var tooLarge *exec.ErrChangelogTooLarge
	if errors.As(err, &tooLarge) {
		return nil, nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "a row of table %q is %d bytes, over the limit of %d bytes for one row", w.d.Name, tooLarge.Size, tooLarge.Limit).
			WithHint("The limit is the NATS server's max_payload.")
	}
	if err != nil {
		return nil, nil, err
	}
	log.SetEncodedCols(members)
	return changes, msgs, nil
}

// ensureCurrent makes sure the table's log covers everything published to
// its subject (meta.TableLog.EnsureCurrent). Holding the log's lock.
func (e *Engine) ensureCurrent(ctx context.Context, d *catalog.Descriptor, log *meta.TableLog) error {
	return log.EnsureCurrent(ctx, d)
}

// checkedChanges returns a table write's statements, checked against the
// table's current contents. An autocommit statement is computed here, under
// the lock. A transaction's statements were computed against the table as
// it was then; they are replayed against the table as it is now, so a
// concurrent commit that changed a row they change fails this one (40001)
// rather than being overwritten.
func (e *Engine) checkedChanges(ctx context.Context, w *tableWrite, log *meta.TableLog) ([][]exec.Change, error) {
	ts, err := e.openTableState(w.d, log)
	if err != nil {
		return nil, err
	}
	defer ts.Close()
	if w.compute != nil {
		changes, err := w.compute(ctx, ts)
		if err != nil {
			return nil, err
		}
		return [][]exec.Change{changes}, nil
	}
	// A transaction's statements were checked against its snapshot; a
	// commit since may hold the same values.
	ordered := exec.ChangelogOrder(w.stmts)
	cur := e.current(w.d)
	if err := checkUniqueIndexes(cur, ts, ordered); err != nil {
		return nil, err
	}
	if err := checkUniqueConstraints(cur, ts, nil, ordered, nil); err != nil {
		return nil, err
	}
	deletes := false
	for _, ch := range ordered {
		deletes = deletes || ch.Sign < 0
	}
	if !deletes {
		// Only insertions: a primary key taken since is the one conflict.
		return w.stmts, checkTableChanges(w.d, ts.cols, ordered, ts.KeyTaken)
	}
	if ts.key != nil {
		return w.stmts, replayKeyed(w.d, ts, ordered)
	}
	return w.stmts, replayUnkeyed(w.d, ts, ordered)
}

// replayUnkeyed replays a transaction's changes to a table without a
// primary key against its current rows, reading only the counts of the
// rows they touch: a deletion must find a row equal to the one it
// deleted (or 40001).
func replayUnkeyed(d *catalog.Descriptor, ts *tableState, changes []exec.Change) error {
	present := map[string]int{} // identity -> rows of it now
	for _, ch := range changes {
		k := string(rowKey(nil, ch.Row))
		n, seen := present[k]
		if !seen {
			var err error
			if n, err = ts.CountOf([]byte(k)); err != nil {
				return err
			}
		}
		if ch.Sign < 0 {
			if n == 0 {
				return sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update of table %q", d.Name).
					WithHint("Another transaction changed a row this one changes; retry the transaction.")
			}
			n--
		} else {
			n++
		}
		present[k] = n
	}
	return nil
}

// replayKeyed replays a transaction's changes to a keyed table against its
// current rows, reading only the rows they touch: a deletion must find the
// row it deleted still there unchanged (or 40001), an insertion its key
// free (or 23505).
func replayKeyed(d *catalog.Descriptor, ts *tableState, changes []exec.Change) error {
	type slot struct{ row types.Row } // row nil: no row under the key
	current := map[string]slot{}
	for _, ch := range changes {
		k := string(rowKey(ts.key, ch.Row))
		cur, seen := current[k]
		if !seen {
			row, err := ts.Lookup([]byte(k))
			if err != nil {
				return err
			}
			cur = slot{row}
		}
		if ch.Sign < 0 {
			if cur.row == nil || string(rowKey(nil, cur.row)) != string(rowKey(nil, ch.Row)) {
				return sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update of table %q", d.Name).
					WithHint("Another transaction changed a row this one changes; retry the transaction.")
			}
			current[k] = slot{}
			continue
		}
		if cur.row != nil {
			return duplicateKey(d, ts.cols, ts.key, ch.Row)
		}
		current[k] = slot{ch.Row}
	}
	return nil
}

// duplicateKey is PostgreSQL's unique violation for row's primary key.
func duplicateKey(d *catalog.Descriptor, cols []types.Column, key []int, row types.Row) error {
	names := make([]string, len(key))
	vals := make([]string, len(key))
	for i, j := range key {
		names[i] = cols[j].Name
		vals[i] = types.FormatText(row[j], cols[j].Type)
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("duplicate key value violates unique constraint \"%s\"", catalog.PrimaryKeyName(d.Name)),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.", strings.Join(names, ", "), strings.Join(vals, ", "))}
}
