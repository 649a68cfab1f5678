package sql

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A commit publishes all it wrote to a table as ONE changelog message, so
// it lands whole or not at all: a message JetStream refuses (too large,
// stream full) leaves nothing behind. A commit that writes several
// subjects (tables, or streams inserted into inside a transaction)
// publishes between barriers (exec.Runtime.PublishFenced), so every view
// sees all of it in one epoch.

// tableWrite is what one commit writes to one table.
type tableWrite struct {
	d *catalog.Descriptor
	// stmts holds each statement's changes, in order (a transaction's).
	stmts [][]exec.Change
	// compute, when set, computes a single statement's changes under the
	// table's lock from its current state and checks them itself (an
	// autocommit statement); stmts is then ignored.
	compute func(ctx context.Context, ts *tableState) ([]exec.Change, error)
}

// streamWrite is what one commit inserts into one stream: one JSON
// message per row.
type streamWrite struct {
	d    *catalog.Descriptor
	msgs [][]byte
}

// commitWrites publishes one commit: its tables' changes, checked under
// the tables' locks against their current contents, and its stream rows.
// It returns once JetStream has acknowledged everything.
func (s *session) commitWrites(ctx context.Context, tables []*tableWrite, streams []*streamWrite) error {
	e := s.e
	if err := e.checkWritable(); err != nil {
		return err
	}
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	if len(tables) == 1 && len(streams) == 0 {
		return e.commitTable(ctx, tables[0])
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
	type outgoing struct {
		d       *catalog.Descriptor
		data    []byte
		log     *tableLog
		changes []exec.Change
	}
	var msgs []outgoing
	limit := e.changelogLimit()
	for i, w := range tables {
		changes, data, err := e.prepareTableCommit(ctx, w, logs[i])
		if err != nil {
			return err
		}
		if len(changes) > 0 {
			msgs = append(msgs, outgoing{d: w.d, data: data, log: logs[i], changes: changes})
		}
	}
	for _, w := range streams {
		if se := e.broker.StreamWriteError(w.d.JSStream, fmt.Sprintf("could not write to stream %q", w.d.Name)); se != nil && len(w.msgs) > 0 {
			return se
		}
		for _, m := range w.msgs {
			if len(m) > limit {
				return sqlerr.New(sqlerr.ProgramLimitExceeded, "a row for stream %q is %d bytes, over the limit of %d bytes for one message", w.d.Name, len(m), limit)
			}
			msgs = append(msgs, outgoing{d: w.d, data: m})
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	seqs := make([]uint64, len(msgs))
	var fenced error
	var notDurable *broker.NotDurableError
	publish := func() (map[string]uint64, error) {
		if fenced = e.checkFence(); fenced != nil {
			return nil, fenced
		}
		futures := make([]jetstream.PubAckFuture, len(msgs))
		var err error
		for i, m := range msgs {
			if futures[i], err = e.broker.JS.PublishAsync(m.d.Subject, m.data, jetstream.WithExpectStream(m.d.JSStream)); err != nil {
				break
			}
		}
		published := map[string]uint64{}
		timeout := time.After(publishTimeout)
		for i, f := range futures {
			if f == nil {
				continue
			}
			select {
			case ack := <-f.Ok():
				seqs[i] = ack.Sequence
				published[msgs[i].d.Subject] = max(published[msgs[i].d.Subject], ack.Sequence)
			case perr := <-f.Err():
				// Stored but not fsynced: written all the same.
				if nd := (*broker.NotDurableError)(nil); errors.As(perr, &nd) {
					seqs[i] = nd.Ack.Sequence
					published[msgs[i].d.Subject] = max(published[msgs[i].d.Subject], nd.Ack.Sequence)
					notDurable = nd
					continue
				}
				err = errors.Join(err, perr)
			case <-timeout:
				err = errors.Join(err, fmt.Errorf("no acknowledgement from JetStream: %w", nats.ErrTimeout))
			}
		}
		return published, err
	}
	var published map[string]uint64
	var err error
	if len(msgs) == 1 {
		published, err = publish()
	} else {
		subjects := make([]string, len(msgs))
		for i, m := range msgs {
			subjects[i] = m.d.Subject
		}
		err = e.rt.PublishFenced(subjects, func() (map[string]uint64, error) {
			published, err = publish()
			return published, err
		})
	}
	if fenced != nil {
		return fenced // nothing was published
	}
	for i, m := range msgs {
		if seqs[i] == 0 {
			continue
		}
		e.acknowledged(m.d.Subject, seqs[i])
		if m.log != nil {
			m.log.added(seqs[i], m.changes)
		}
	}
	if err != nil {
		if len(published) > 0 {
			var landed []string
			for _, m := range msgs {
				if published[m.d.Subject] > 0 {
					landed = append(landed, m.d.Name)
				}
			}
			return sqlerr.New(sqlerr.TransactionResolutionUnknown, "the commit was only partly published (it reached %s): %v", strings.Join(dedupe(landed), ", "), err)
		}
		for _, m := range msgs {
			if m.log != nil {
				m.log.unsure.Store(true)
			}
		}
		for _, m := range msgs {
			if se := e.broker.StreamWriteError(m.d.JSStream, "could not commit"); se != nil {
				return se
			}
		}
		return e.publishFailure(err, "could not commit")
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
	changes, data, err := e.prepareTableCommit(ctx, w, log)
	if err != nil || len(changes) == 0 {
		log.mu.Unlock()
		return err
	}
	en := log.queue(changes, data)
	log.mu.Unlock()
	return log.await(e, w.d, en)
}

// checkExists fails if table d was dropped (or replaced) since the
// statement was bound.
func (e *Engine) checkExists(d *catalog.Descriptor) error {
	if cur, ok := e.lookup(d.Name); !ok || cur.ID != d.ID {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", d.Name)
	}
	return nil
}

// prepareTableCommit checks a table write against the table's current
// contents and encodes it as one changelog message. Holding log.mu.
func (e *Engine) prepareTableCommit(ctx context.Context, w *tableWrite, log *tableLog) ([]exec.Change, []byte, error) {
	// A table whose dataflow stopped would never show the write.
	if err := e.tableFailure(w.d); err != nil {
		return nil, nil, err
	}
	if se := e.broker.StreamWriteError(w.d.JSStream, fmt.Sprintf("could not write to table %q", w.d.Name)); se != nil {
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
	data, err := exec.EncodeChangelog(cols, changes, e.changelogLimit())
	var tooLarge *exec.ErrChangelogTooLarge
	if errors.As(err, &tooLarge) {
		return nil, nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "the changes to table %q are %d bytes, over the limit of %d bytes for one commit", w.d.Name, tooLarge.Size, tooLarge.Limit).
			WithHint("Write fewer or smaller rows per statement or transaction; the limit is the NATS server's max_payload.")
	}
	return changes, data, err
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	out := names[:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// changelogLimit is the largest changelog message the NATS connection
// takes, less room for the headers JetStream adds.
func (e *Engine) changelogLimit() int {
	limit := int(e.broker.NC.MaxPayload())
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
	ordered := exec.ChangelogOrder(w.stmts)
	deletes := false
	for _, ch := range ordered {
		deletes = deletes || ch.Sign < 0
	}
	if !deletes {
		// Only insertions: a primary key taken since is the one conflict.
		return w.stmts, checkTableChanges(w.d, ts.cols, ordered, ts.keyTaken)
	}
	rows, err := ts.rows(ctx)
	if err != nil {
		return nil, err
	}
	present := map[string][]types.Row{}
	for _, r := range rows {
		k := string(rowKey(ts.key, r))
		present[k] = append(present[k], r)
	}
	for _, ch := range ordered {
		k := string(rowKey(ts.key, ch.Row))
		have := present[k]
		if ch.Sign < 0 {
			if len(have) == 0 || (ts.key != nil && string(rowKey(nil, have[0])) != string(rowKey(nil, ch.Row))) {
				return nil, sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update of table %q", w.d.Name).
					WithHint("Another transaction changed a row this one changes; retry the transaction.")
			}
			present[k] = have[1:]
			continue
		}
		if ts.key != nil && len(have) > 0 {
			return nil, duplicateKey(w.d, ts.cols, ts.key, ch.Row)
		}
		present[k] = append(have, ch.Row)
	}
	return w.stmts, nil
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
