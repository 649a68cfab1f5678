package sql

import (
	"context"
	"sync"
	"time"

	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// A table (CREATE TABLE without APPEND ONLY) keeps its changes in its own
// JetStream subject as a changelog (see exec/changelog.go). Like a view, it
// has a pipeline that reads that changelog into a state table: keyed by the
// primary key, or as a multiset of whole rows when it has none (two equal
// rows of a table without a key are indistinguishable in SQL, so the
// multiplicity plays the part of PostgreSQL's hidden row identity). SELECT,
// UPDATE and DELETE read that state; views over the table read the
// changelog itself, from the table's start.
//
// Statements that must see the table's current contents (UPDATE, DELETE,
// INSERT into a table with a primary key, which checks for duplicates)
// take the table's write lock, wait until its pipeline has committed every
// change published so far, compute their changes and publish them as one
// changelog message before releasing the lock. Only this server writes a
// table's subject, so this serialises all writers.

// tableWriters holds per-table write locks and, for read-your-writes, the
// JetStream sequence of each table's newest acknowledged change.
type tableWriters struct {
	mu      sync.Mutex
	locks   map[uint32]*sync.Mutex
	written map[uint32]uint64
}

func (w *tableWriters) lock(id uint32) func() {
	w.mu.Lock()
	if w.locks == nil {
		w.locks = map[uint32]*sync.Mutex{}
	}
	l, ok := w.locks[id]
	if !ok {
		l = &sync.Mutex{}
		w.locks[id] = l
	}
	w.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (w *tableWriters) wrote(id uint32, seq uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == nil {
		w.written = map[uint32]uint64{}
	}
	if seq > w.written[id] {
		w.written[id] = seq
	}
}

func (w *tableWriters) lastWritten(id uint32) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written[id]
}

// tableSubjectPrefix is where tables keep their changelogs unless CREATE
// TABLE names a subject.
const tableSubjectPrefix = "streamdb.table."

// startTable starts the pipeline that keeps a table's state table current.
func (e *Engine) startTable(d *storage.Descriptor) error {
	root, err := tableScan(d)
	if err != nil {
		return err
	}
	return e.rt.StartView(d, root)
}

func tableScan(d *storage.Descriptor) (*plan.Scan, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	return &plan.Scan{Object: d, Cols: cols}, nil
}

// waitTableCurrent waits until the table's state holds every change
// published to its changelog (read from JetStream, so it holds after a
// restart too). Paused sources never catch up, so a paused server refuses
// instead of blocking.
func (e *Engine) waitTableCurrent(ctx context.Context, d *storage.Descriptor, what string) error {
	last, err := e.broker.LastSeqForSubject(ctx, d.JSStream, d.Subject)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "read the changelog of table %s: %v", d.Name, err)
	}
	return e.waitTableAt(ctx, d, last, what)
}

func (e *Engine) waitTableAt(ctx context.Context, d *storage.Descriptor, seq uint64, what string) error {
	if seq == 0 || seq <= d.StartSeq {
		return nil
	}
	targets := map[string]uint64{d.Subject: seq}
	if e.rt.Paused() {
		probe, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		err := e.rt.WaitFor(probe, []uint32{d.ID}, targets)
		cancel()
		if err == nil {
			return nil
		}
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s on table %q waits for the table to apply its earlier changes, but the server is paused", what, d.Name).
			WithHint("Run ALTER SYSTEM RESUME first.")
	}
	return e.waitLogged(ctx, []uint32{d.ID}, targets, what+" on table "+d.Name)
}

// waitTablesRead gives a query read-your-writes over the tables it reads:
// it waits until each has applied the changes this server acknowledged.
func (e *Engine) waitTablesRead(ctx context.Context, root plan.Node) error {
	if e.rt.Paused() {
		return nil
	}
	for _, src := range plan.Sources(root) {
		if src.Kind != storage.KindTable {
			continue
		}
		if seq := e.tables.lastWritten(src.ID); seq > 0 {
			if err := e.waitLogged(ctx, []uint32{src.ID}, map[string]uint64{src.Subject: seq}, "SELECT on table "+src.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// publishChanges publishes a statement's changes to a table's changelog
// and records the newest sequence for read-your-writes.
func (e *Engine) publishChanges(ctx context.Context, d *storage.Descriptor, cols []types.Column, changes []exec.Change) error {
	if len(changes) == 0 {
		return nil
	}
	msgs, err := exec.EncodeChangelog(cols, changes)
	if err != nil {
		return err
	}
	seq, err := e.publishSeq(ctx, d, msgs)
	if err != nil {
		return err
	}
	e.tables.wrote(d.ID, seq)
	return nil
}
