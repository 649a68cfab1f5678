package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/plan"
	"streamdb/types"
)

// Reads see every write acknowledged before them, as in PostgreSQL: a
// commit is visible to every statement that starts after it returned, in
// tables and in every view over them. A commit is acknowledged when
// JetStream holds it, a barrier or two before the epoch that applies it
// commits, so a read waits for that epoch (waitAcknowledged). Events that
// other producers publish straight to NATS are not acknowledged by this
// server; FLUSH waits for those.

// acknowledged records that a message this server published to subject at
// seq was acknowledged to a client.
func (e *Engine) acknowledged(subject string, seq uint64) {
	e.ackMu.Lock()
	defer e.ackMu.Unlock()
	if e.acked == nil {
		e.acked = map[string]uint64{}
	}
	e.acked[subject] = max(e.acked[subject], seq)
}

// forgetAcked drops what was acknowledged on subject: its JetStream
// stream was made anew (a table created again after the old table's
// stream was deleted), so sequences start again from 1, and a read
// waiting for the old stream's sequences would wait for ever.
func (e *Engine) forgetAcked(subject string) {
	e.ackMu.Lock()
	defer e.ackMu.Unlock()
	delete(e.acked, subject)
	delete(e.replay, subject)
}

// waitAcknowledged makes a read see every acknowledged write (and, after
// a start or a rollback, the replay of each table's changelog) in the
// tables and views root reads. It does not wait while the server is
// paused (sources read nothing then) or when the session turned
// read_your_writes off.
func (s *session) waitAcknowledged(ctx context.Context, root plan.Node) error {
	objs := plan.Sources(root)
	if s.tx != nil {
		// A block reads tables in its snapshot (txRead), which holds every
		// acknowledged commit already; only views need their epoch.
		views := objs[:0:0]
		for _, d := range objs {
			if d.Kind == catalog.KindView {
				views = append(views, d)
			}
		}
		objs = views
	}
	return s.e.waitAcknowledged(ctx, s.settings["read_your_writes"] != "off", objs)
}

// waitAllAcknowledged waits until every table and every populated view
// holds every acknowledged write, so that a CHECKPOINT or SAVEPOINT taken
// after a write holds it. (A view still populating may be far behind; it
// is not read until it catches up anyway.)
func (s *session) waitAllAcknowledged(ctx context.Context) error {
	objs := s.e.objects(catalog.KindTable)
	for _, v := range s.e.objects(catalog.KindView) {
		if _, _, populating := s.e.populatingProgress(v); !populating {
			objs = append(objs, v)
		}
	}
	return s.e.waitAcknowledged(ctx, s.settings["read_your_writes"] != "off", objs)
}

// waitAcknowledged waits until the running tables and views among objs
// have committed an epoch holding every acknowledged write to their
// inputs, unless !enabled, the server is paused, or epochs are held for
// a full disk (reads then see the newest committed state; the writes
// appear once space is freed), or it replays another cluster's epochs
// (--replay-control: it acknowledges no write, and reads see the epoch
// replayed so far, which may end before the changelogs do).
func (e *Engine) waitAcknowledged(ctx context.Context, enabled bool, objs []*catalog.Descriptor) error {
	if !enabled || e.rt.Paused() || e.rt.Stalled() != nil || e.rt.Following() {
		return nil
	}
	var ids []uint32
	for _, d := range objs {
		// A failed view's state stays as it was; reading it does not wait.
		if (d.Kind == catalog.KindTable || d.Kind == catalog.KindView) && e.rt.ViewStatus(d.ID) == "running" {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	targets := map[string]uint64{}
	e.ackMu.Lock()
	for subj, seq := range e.acked {
		targets[subj] = seq
	}
	for subj, seq := range e.replay {
		targets[subj] = max(targets[subj], seq)
	}
	e.ackMu.Unlock()
	if len(targets) == 0 {
		return nil
	}
	return e.waitLogged(ctx, ids, targets, "a read of acknowledged writes")
}

// noteReplay records, at start and after a rollback, the end of every
// table's changelog: the restored tables replay up to there, and reads
// wait for that as for acknowledged writes. It also starts reporting the
// replay's progress (trackReplay).
func (e *Engine) noteReplay(ctx context.Context) {
	replay := map[string]uint64{}
	e.catMu.RLock()
	var tables []*catalog.Descriptor
	for _, d := range e.objs {
		if d.Kind == catalog.KindTable {
			tables = append(tables, d)
		}
	}
	e.catMu.RUnlock()
	for _, d := range tables {
		seq, err := e.streams.LastOnSubject(ctx, d)
		if err != nil {
			e.log.Warn("read the end of a table's changelog after rollback", "table", d.Name, "err", err)
			continue
		}
		if seq > d.StartSeq {
			replay[d.Subject] = seq
		}
	}
	e.ackMu.Lock()
	e.replay = replay
	e.ackMu.Unlock()
	e.trackReplay("replay of the input after the restored positions")
}

// openScratch opens a scratch store on disk under the state store's
// directory (block_spill.go).
func (e *Engine) openScratch() (scratchStore, error) {
	return e.state.OpenScratch()
}

// txRead returns what a query inside a transaction block reads. Tables
// are read in the block's snapshot, with the changes it sees on top (so
// acknowledged commits are there without waiting for their epoch). Views
// are computed from committed input only, so a query that reads a view
// reads the newest committed epoch (after waitAcknowledged), with every
// table scan replaced by the table's rows as the block sees them. done
// releases what the read holds.
func (s *session) txRead(ctx context.Context, root plan.Node) (r meta.StateReader, scan func(*plan.Scan) (plan.Node, error), done func(), err error) {
	snap, err := s.txSnapshot()
	if err != nil {
		return nil, nil, nil, err
	}
	readsViews := false
	for _, src := range plan.Sources(root) {
		readsViews = readsViews || src.Kind == catalog.KindView
	}
	r, done = snap.Snap, func() {}
	if readsViews {
		fresh := s.e.state.Snapshot()
		r, done = fresh, func() { fresh.Close() }
	}
	return r, func(sc *plan.Scan) (plan.Node, error) {
		if sc.Object.Kind != catalog.KindTable {
			return sc, nil
		}
		pending := s.tx.pendingFor(sc.Object.ID)
		spill := s.tx.readSpillOf(sc.Object.ID)
		if len(pending) == 0 && spill == nil && !readsViews {
			return sc, nil
		}
		ts, err := newTableState(sc.Object, snap.Snap, pending)
		if err != nil {
			return nil, err
		}
		ts.setSpill(spill)
		// The rows stream from the block's snapshot (Each, which batch
		// execution prefers). Rows marks the scan as not of stored
		// state (no key or index reads); it reads them whole.
		out := *sc
		out.StoredKey = nil
		out.Each = ts.EachRow
		out.Rows = func() []types.Row {
			rows, err := ts.Rows(ctx)
			if err != nil {
				return nil
			}
			return rows
		}
		return &out, nil
	}, done, nil
}
