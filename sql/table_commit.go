package sql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A commit that writes one subject and fits in one message publishes it
// as ONE message (a table's through its log's queue), so it lands whole or
// not at all: a message JetStream refuses (stream full) leaves nothing
// behind. Several rows for one stream are one atomic batch (publishRows).
// Any other commit (larger than a message, or writing several
// tables or streams) goes through the transaction stream (publishTxn,
// broker/txn.go): whole or not at all too, and seen by every view in one
// epoch.

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
	if len(tables) == 1 && len(streams) == 0 && linked == nil && tables[0].spill == nil {
		return e.commitTable(ctx, tables[0])
	}
	// Every table linked by a foreign key is locked too (table_fk.go).
	for _, d := range linked {
		if !slices.ContainsFunc(tables, func(w *tableWrite) bool { return w.d.ID == d.ID }) {
			tables = append(tables, &tableWrite{d: d})
		}
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].d.ID < tables[j].d.ID })
	logs := make([]*tableLog, len(tables))
	for i, w := range tables {
		if err := e.checkExists(w.d); err != nil {
			return err
		}
		logs[i] = e.tables.log(w.d.ID)
		logs[i].mu.Lock()
		defer logs[i].mu.Unlock()
		// This commit is published outside the queue; what is queued goes
		// first.
		logs[i].waitIdle()
	}
	if linked != nil {
		if err := s.enforceForeignKeys(ctx, tables, logs, links); err != nil {
			return err
		}
	}
	var parts []txnPart
	limit := e.changelogLimit()
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
			parts = append(parts, txnPart{d: w.d, msgs: msgs, log: logs[i], changes: changes})
		}
	}
	for _, w := range streams {
		if w.rowCount() == 0 {
			continue
		}
		if se := e.broker.StreamWriteError(w.d.JSStream, fmt.Sprintf("could not write to stream %q", w.d.Name)); se != nil {
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
		parts = append(parts, txnPart{d: w.d, msgs: w.msgs})
	}
	switch {
	case len(parts) == 0:
		return nil
	case len(parts) == 1 && len(parts[0].msgs) == 1:
		return e.publishOne(parts[0])
	case len(parts) == 1 && parts[0].log == nil && parts[0].source == nil:
		return e.publishRows(parts[0])
	default:
		return e.publishTxn(parts)
	}
}

// publishRows publishes the rows of a write to one stream as events, one
// message each, as producers publish them, in one epoch, and whole or not
// at all: as one JetStream atomic batch (broker.PublishAtomic), so a row
// the stream's limits refuse leaves none of them stored. A write the batch
// cannot carry (more rows than broker.MaxAtomicBatch, or a JetStream
// stream that does not allow atomic publish: one streamdb bound to rather
// than created) goes through the transaction stream, whole too; its
// subject then holds one reference message, whose rows streamdb's readers
// take in its place.
func (e *Engine) publishRows(p txnPart) error {
	err := e.publishBatch(p)
	switch {
	case errors.Is(err, broker.ErrAtomicDisabled):
		// A JetStream stream that does not allow atomic publish belongs
		// to others who read rows from it: its rows go as they always
		// did, one message each, not as a transaction reference.
		return e.publishEach(p)
	case errors.Is(err, broker.ErrAtomicUnavailable):
		return e.publishTxn([]txnPart{p})
	}
	return err
}

// publishEach publishes a stream's rows one message each, as producers
// publish them. They are not one atomic unit: if JetStream refuses a
// later row (the stream's limits), the rows before it stay, and the
// error names how many landed.
func (e *Engine) publishEach(p txnPart) error {
	var landed int
	var notDurable *broker.NotDurableError
	var fenced error
	err := e.rt.PublishFenced([]string{p.d.Subject}, func() (map[string]uint64, error) {
		if fenced = e.checkFence(); fenced != nil {
			return nil, fenced
		}
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		defer cancel()
		futures := make([]jetstream.PubAckFuture, 0, len(p.msgs))
		var err error
		for _, m := range p.msgs {
			f, perr := e.broker.JS.PublishAsync(p.d.Subject, m, jetstream.WithExpectStream(p.d.JSStream))
			if perr != nil {
				err = perr
				break
			}
			futures = append(futures, f)
		}
		var last uint64
		for _, f := range futures {
			ack, perr := awaitAck(ctx, f)
			if nd := (*broker.NotDurableError)(nil); errors.As(perr, &nd) {
				ack, perr, notDurable = nd.Ack, nil, nd
			}
			if perr != nil {
				err = errors.Join(err, perr)
				continue
			}
			landed++
			last = max(last, ack.Sequence)
		}
		if last == 0 {
			return nil, err
		}
		e.acknowledged(p.d.Subject, last)
		return map[string]uint64{p.d.Subject: last}, err
	})
	if fenced != nil {
		return fenced // nothing was published
	}
	if err != nil {
		if landed > 0 {
			return sqlerr.New(sqlerr.TransactionResolutionUnknown, "only %d of the %d rows for stream %q were published: %v", landed, len(p.msgs), p.d.Name, err).
				WithHint("The stream's JetStream stream does not allow atomic publish, so its rows are published one by one; its limits refused the rest.")
		}
		if se := e.broker.StreamWriteError(p.d.JSStream, "could not write"); se != nil {
			return se
		}
		return e.publishFailure(err, fmt.Sprintf("could not write to stream %q", p.d.Name))
	}
	if notDurable != nil {
		return storedNotDurable("the write", notDurable)
	}
	return nil
}

// publishBatch publishes a stream's rows as one atomic batch, or answers
// broker.ErrAtomicUnavailable having published nothing.
func (e *Engine) publishBatch(p txnPart) error {
	if len(p.msgs) > broker.MaxAtomicBatch {
		return broker.ErrAtomicUnavailable
	}
	var notDurable *broker.NotDurableError
	var fenced error
	err := e.rt.PublishFenced([]string{p.d.Subject}, func() (map[string]uint64, error) {
		if fenced = e.checkFence(); fenced != nil {
			return nil, fenced
		}
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		defer cancel()
		ack, err := e.broker.PublishAtomic(ctx, p.d.JSStream, p.d.Subject, p.msgs)
		if nd := (*broker.NotDurableError)(nil); errors.As(err, &nd) {
			ack, err, notDurable = nd.Ack, nil, nd
		}
		if err != nil {
			return nil, err
		}
		e.acknowledged(p.d.Subject, ack.Sequence)
		return map[string]uint64{p.d.Subject: ack.Sequence}, nil
	})
	switch {
	case fenced != nil:
		return fenced // nothing was published
	case errors.Is(err, broker.ErrAtomicUnavailable):
		return err
	case err != nil:
		if se := e.broker.StreamWriteError(p.d.JSStream, "could not write"); se != nil {
			return se
		}
		return e.publishFailure(err, fmt.Sprintf("could not write %d rows to stream %q", len(p.msgs), p.d.Name))
	case notDurable != nil:
		return storedNotDurable("the write", notDurable)
	}
	return nil
}

// publishOne publishes a commit of one message to one subject outside a
// table's queue. Caller holds the table's log mu with its queue idle.
func (e *Engine) publishOne(p txnPart) error {
	if err := e.checkFence(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	ack, err := e.broker.JS.Publish(ctx, p.d.Subject, p.msgs[0], jetstream.WithExpectStream(p.d.JSStream))
	var notDurable *broker.NotDurableError
	if errors.As(err, &notDurable) {
		ack = notDurable.Ack
	} else if err != nil {
		if p.log != nil {
			p.log.unsure.Store(true)
		}
		if se := e.broker.StreamWriteError(p.d.JSStream, "could not commit"); se != nil {
			return se
		}
		return e.publishFailure(err, "could not commit")
	}
	e.acknowledged(p.d.Subject, ack.Sequence)
	if p.log != nil {
		p.log.added(ack.Sequence, p.changes)
	}
	if notDurable != nil {
		return storedNotDurable("the commit", notDurable)
	}
	return nil
}

// commitTable commits changes to one table through its log's queue (group
// commit).
func (e *Engine) commitTable(ctx context.Context, w *tableWrite) error {
	if err := e.checkExists(w.d); err != nil {
		return err
	}
	log := e.tables.log(w.d.ID)
	log.mu.Lock()
	changes, msgs, err := e.prepareTableCommit(ctx, w, log)
	if err != nil || len(changes) == 0 {
		log.mu.Unlock()
		return err
	}
	if len(msgs) > 1 {
		// Too large for one message: published outside the queue, after
		// what is queued, holding mu so that nothing is computed on top
		// of it before it lands.
		defer log.mu.Unlock()
		log.waitIdle()
		return e.publishTxn([]txnPart{{d: w.d, msgs: msgs, log: log, changes: changes}})
	}
	en := log.queue(changes, msgs[0])
	log.mu.Unlock()
	return log.await(e, w.d, en)
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
func (e *Engine) prepareTableCommit(ctx context.Context, w *tableWrite, log *tableLog) ([]exec.Change, [][]byte, error) {
	// A table whose dataflow stopped would never show the write.
	if err := e.tableFailure(w.d); err != nil {
		return nil, nil, err
	}
	// The message is formatted only for a failed stream: this runs for
	// every write.
	if se := e.broker.StreamWriteError(w.d.JSStream, ""); se != nil {
		if named := e.broker.StreamWriteError(w.d.JSStream, fmt.Sprintf("could not write to table %q", w.d.Name)); named != nil {
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
	if slices.Equal(log.encodedCols, members) {
		encode = exec.EncodeChangelogChunksNamesChecked
	}
	msgs, err := encode(members, changes, e.changelogLimit())
	var tooLarge *exec.ErrChangelogTooLarge
	if errors.As(err, &tooLarge) {
		return nil, nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "a row of table %q is %d bytes, over the limit of %d bytes for one row", w.d.Name, tooLarge.Size, tooLarge.Limit).
			WithHint("The limit is the NATS server's max_payload.")
	}
	if err != nil {
		return nil, nil, err
	}
	log.encodedCols = members
	return changes, msgs, nil
}

// changelogLimit is the largest changelog message the NATS connection
// takes, less room for the headers JetStream adds.
func (e *Engine) changelogLimit() int {
	limit := int(e.link.MaxPayload())
	if limit <= 0 {
		limit = 1 << 20
	}
	return limit - 4096
}

// ensureCurrent makes sure the table's log covers everything published to
// its subject (see tableLog.current). Holding log.mu.
func (e *Engine) ensureCurrent(ctx context.Context, d *catalog.Descriptor, log *tableLog) error {
	if log.unsure.Swap(false) {
		log.current = false
	}
	if log.current {
		return nil
	}
	if err := e.waitTableCurrent(ctx, d, "a write"); err != nil {
		return err
	}
	log.current = true
	return nil
}

// checkedChanges returns a table write's statements, checked against the
// table's current contents. An autocommit statement is computed here, under
// the lock. A transaction's statements were computed against the table as
// it was then; they are replayed against the table as it is now, so a
// concurrent commit that changed a row they change fails this one (40001)
// rather than being overwritten.
func (e *Engine) checkedChanges(ctx context.Context, w *tableWrite, log *tableLog) ([][]exec.Change, error) {
	ts, err := e.openTableState(w.d, log)
	if err != nil {
		return nil, err
	}
	defer ts.close()
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
		return w.stmts, checkTableChanges(w.d, ts.cols, ordered, ts.keyTaken)
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
			if n, err = ts.countOf([]byte(k)); err != nil {
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
			row, err := ts.lookup([]byte(k))
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
	return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("duplicate key value violates unique constraint \"%s_pkey\"", d.Name),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.", strings.Join(names, ", "), strings.Join(vals, ", "))}
}
