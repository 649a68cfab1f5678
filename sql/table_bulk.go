package sql

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"slices"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A bulk insert (an autocommit COPY into a table) streams: its rows are
// converted, checked and published a batch at a time, as they arrive, as
// one commit through the transaction stream (meta.BulkTxn, which
// publishes it and says why nothing of it is visible before its
// decision). What the writer keeps while rows flow is one batch and, for
// the duplicates among its rows, a 64-bit hash of each row's primary key
// past the first rows in increasing key order (all of them, for sorted
// data, are told apart by order alone); hashes that meet are resolved
// exactly by reading the commit's data back, so a collision never
// refuses a COPY. The table's log lock is held from the first row to the
// end: the rows are checked against the table as it is, and no commit is
// computed on top of this one until the table has applied it, which is
// why the log never holds its changes.
//
// An insert into a table with UNIQUE constraints, unique indexes or
// foreign keys, or with ON CONFLICT DO NOTHING, decides each row as it
// comes instead (table_bulk_keys.go). UPDATE and DELETE on such a table
// take the general path, which needs every row at once.

// bulkBatchRows is the number of rows converted, checked and encoded at a
// time.
const bulkBatchRows = 8192

// bulkHashBlock is the number of key hashes per block; each block is
// sorted once full.
const bulkHashBlock = 1 << 20

// canBulkInsert reports whether a change of table d by this session can
// stream with a check of each batch alone (table_stream_change.go).
func (s *session) canBulkInsert(d *catalog.Descriptor) bool {
	if s.tx != nil || d.Kind != catalog.KindTable || d.Mirror != "" || d.Envelope() != "" {
		return false
	}
	return bulkTableOK(s.e, s.e.current(d))
}

func bulkTableOK(e *Engine, d *catalog.Descriptor) bool {
	if hasConstraint(d, "u") || hasConstraint(d, "f") {
		return false
	}
	for _, ix := range d.Indexes {
		if ix.Unique {
			return false
		}
	}
	_, linked := e.fkLinked([]*catalog.Descriptor{d})
	return linked == nil
}

// streamsInsert reports whether an insert into table d by this session
// streams (bulkInsert): outside a transaction block, into a table whose
// foreign keys onto itself, if any, reference its primary key
// (selfRefStreams).
func (s *session) streamsInsert(d *catalog.Descriptor) bool {
	if s.tx != nil || d.Kind != catalog.KindTable || d.Mirror != "" || d.Envelope() != "" {
		return false
	}
	_, _, ok := s.e.insertParents(s.e.current(d))
	return ok
}

// bulkInsert inserts the rows produce hands over (in batches, which it may
// reuse once the call returns) into table d as one commit, and returns how
// many it inserted. fill puts the defaults into a batch. arb are the
// arbiters of ON CONFLICT DO NOTHING (nil without it); emit returns the
// rows of the batch that were inserted.
func (s *session) bulkInsert(ctx context.Context, d *catalog.Descriptor, arb map[string]bool, fill func([]types.Row) error,
	produce func(emit func([]types.Row) ([]types.Row, error)) error) (int64, error) {
	links, parents, ok := s.e.insertParents(s.e.current(d))
	if !ok {
		return 0, sqlerr.New(sqlerr.SerializationFailure, "table %q was altered while the insert began", d.Name).
			WithHint("Retry the statement.")
	}
	// still tells whether the table, as the catalog has it once locked,
	// references the same tables.
	still := func(cur *catalog.Descriptor) bool {
		_, now, ok := s.e.insertParents(cur)
		return ok && sameTables(now, parents)
	}
	sw, err := s.openStreamingWrite(ctx, d, "the COPY", still, parents)
	if err != nil {
		return 0, err
	}
	defer sw.close()
	ts, b := sw.ts, sw.b
	gen, err := binder.BindGenerated(sw.d, ts.cols)
	if err != nil {
		return 0, err
	}
	if err := b.begin(); err != nil {
		return 0, err
	}
	admit, finish, done, err := s.bulkAdmit(ctx, sw, arb, links, parents)
	if err != nil {
		b.abort()
		return 0, err
	}
	defer done()
	changes := make([]exec.Change, 0, bulkBatchRows)
	var inserted []types.Row
	var n int64
	err = produce(func(rows []types.Row) ([]types.Row, error) {
		if err := fill(rows); err != nil {
			return nil, err
		}
		changes = changes[:0]
		for _, r := range rows {
			changes = append(changes, exec.Change{Row: r, Sign: exec.Insert})
		}
		if err := computeGenerated(gen, changes); err != nil {
			return nil, err
		}
		kept, err := admit(changes)
		if err != nil {
			return nil, err
		}
		n += int64(len(kept))
		if len(kept) == len(rows) {
			return rows, b.add(kept)
		}
		inserted = inserted[:0]
		for _, ch := range kept {
			inserted = append(inserted, ch.Row)
		}
		return inserted, b.add(kept)
	})
	if err == nil {
		err = finish()
	}
	if err == nil {
		err = b.flush()
	}
	if err == nil {
		err = b.checkDuplicates(ctx)
	}
	if err != nil || n == 0 {
		// Nothing refers to the data published so far.
		b.abort()
		return 0, err
	}
	if err := sw.commit("a COPY"); err != nil {
		return 0, err
	}
	return n, nil
}

// bulkAdmit returns the check of a streaming insert's batches, which
// returns the changes of a batch to insert (its own slice, reused); finish,
// the check once every batch is in; and done, to call once the insert is
// over. A table with a primary key alone is checked by the batch
// (bulkWrite.check); one with other unique keys, foreign keys (links, to
// parents) or arbiters by bulkKeys, row by row. A foreign key violation
// is reported by finish: PostgreSQL checks foreign keys at the end of the
// statement, so a later row's unique or CHECK violation, or an error of
// the query, is reported before it.
func (s *session) bulkAdmit(ctx context.Context, sw *streamingWrite, arb map[string]bool, links []fkLink, parents []*catalog.Descriptor) (
	admit func([]exec.Change) ([]exec.Change, error), finish func() error, done func(), err error) {
	ts, b := sw.ts, sw.b
	self := s.e.insertSelfLinks(s.e.current(sw.d))
	if len(self) == 0 && !needsBulkKeys(s.e.current(sw.d), arb, parents) && !needsBulkKeys(sw.d, nil, nil) {
		taken, err := ts.KeyTakenInRange()
		if err != nil {
			return nil, nil, nil, err
		}
		return func(changes []exec.Change) ([]exec.Change, error) {
			if err := b.check(changes, taken); err != nil {
				return nil, err
			}
			return changes, sw.e.checkConstraints(ctx, ts, nil, changes, nil)
		}, func() error { return nil }, func() {}, nil
	}
	keys, err := s.e.newBulkKeys(ctx, ts, arb, func(n int) keySets { return s.e.state.NewKeySets(n) })
	if err != nil {
		return nil, nil, nil, err
	}
	done = keys.close
	refs := newBulkSelfRefs(keys, self, func(n int) keySets { return s.e.state.NewKeySets(n) })
	if refs != nil {
		done = func() { keys.close(); refs.close() }
	}
	fk := s.newInsertFK(links, sw.stateOf)
	var fkErr error
	kept := make([]exec.Change, 0, bulkBatchRows)
	return func(changes []exec.Change) ([]exec.Change, error) {
			var err error
			if kept, err = keys.admit(changes, kept); err != nil {
				return nil, err
			}
			if refs != nil {
				if err := refs.batch(kept); err != nil {
					return nil, err
				}
			}
			if fkErr == nil && len(links) > 0 && len(kept) > 0 {
				err := fk.checkInserted(ctx, keys.d, kept)
				if se, ok := err.(*sqlerr.Error); ok && se.Code == sqlerr.ForeignKeyViolation {
					fkErr = err
				} else if err != nil {
					return nil, err
				}
			}
			return kept, nil
		}, func() error {
			if fkErr != nil || refs == nil {
				return fkErr
			}
			// The self-references, once every row is in the data.
			if err := b.flush(); err != nil {
				return err
			}
			return refs.finish(ctx, b.txn.ReadBack)
		}, done, nil
}

// streamingWrite is an autocommit write to one table that streams its
// changes into one commit (bulkWrite): the table's log lock is held from
// before the table is read to after the table has applied the commit,
// and so are the logs of the tables it reads (an insert's referenced
// tables).
type streamingWrite struct {
	e   *Engine
	d   *catalog.Descriptor
	log *meta.TableLog
	ts  *tableState
	b   *bulkWrite
	// reads are the other tables' logs, by table id, and states their
	// states once read (stateOf).
	reads  map[uint32]*meta.TableLog
	states map[uint32]*tableState
	ctx    context.Context
}

// openStreamingWrite locks table d's log for a streaming write (what names
// it in errors, "the COPY") and reads the table as it is; with it, the
// logs of the tables reads (sorted by id, d not among them), which
// stateOf then reads. ok tells, once the logs are locked, whether the
// table as the catalog has it still takes this write. close releases
// what it holds. It holds stateMu shared until close.
func (s *session) openStreamingWrite(ctx context.Context, d *catalog.Descriptor, what string,
	ok func(cur *catalog.Descriptor) bool, reads []*catalog.Descriptor) (_ *streamingWrite, err error) {
	e := s.e
	if err := e.checkWritable(); err != nil {
		return nil, err
	}
	e.stateMu.RLock()
	defer func() {
		if err != nil {
			e.stateMu.RUnlock()
		}
	}()
	if err := e.checkExists(d); err != nil {
		return nil, err
	}
	d = e.withCurrentIndexesOf(d)
	// The logs are locked in the order of table ids (the lock order).
	locked := append([]*catalog.Descriptor{d}, reads...)
	slices.SortFunc(locked, func(a, b *catalog.Descriptor) int { return cmp.Compare(a.ID, b.ID) })
	logs := map[uint32]*meta.TableLog{}
	for _, t := range locked {
		l := e.tables.Log(t.ID)
		l.Lock()
		logs[t.ID] = l
		// What is queued was computed without this commit and goes first.
		l.WaitIdle()
	}
	defer func() {
		if err != nil {
			for _, l := range logs {
				l.Unlock()
			}
		}
	}()
	log := logs[d.ID]
	delete(logs, d.ID)
	if !ok(e.current(d)) {
		return nil, sqlerr.New(sqlerr.SerializationFailure, "table %q was altered while %s began", d.Name, what).
			WithHint("Retry the statement.")
	}
	for _, t := range reads {
		if err := e.checkExists(t); err != nil {
			return nil, err
		}
	}
	if err := e.tableFailure(d); err != nil {
		return nil, err
	}
	if se := e.streams.WriteError(d.JSStream, fmt.Sprintf("could not write to table %q", d.Name)); se != nil {
		return nil, se
	}
	if err := e.ensureCurrent(ctx, d, log); err != nil {
		return nil, err
	}
	ts, err := e.openTableState(d, log)
	if err != nil {
		return nil, err
	}
	if err := e.checkFence(); err != nil {
		ts.Close()
		return nil, err
	}
	b := &bulkWrite{e: e, d: d, ts: ts, members: memberColumns(d, ts.cols), limit: e.tables.ChangelogLimit()}
	return &streamingWrite{e: e, d: d, log: log, ts: ts, b: b, reads: logs, states: map[uint32]*tableState{}, ctx: ctx}, nil
}

// stateOf returns table t, one of the tables the write reads, as it is.
func (sw *streamingWrite) stateOf(t *catalog.Descriptor) (*tableState, error) {
	if ts, ok := sw.states[t.ID]; ok {
		return ts, nil
	}
	log, ok := sw.reads[t.ID]
	if !ok {
		return nil, sqlerr.New(sqlerr.SerializationFailure, "table %q was linked by a foreign key while this write ran", t.Name).
			WithHint("Retry the statement.")
	}
	if err := sw.e.ensureCurrent(sw.ctx, t, log); err != nil {
		return nil, err
	}
	ts, err := sw.e.openTableState(t, log)
	if err != nil {
		return nil, err
	}
	sw.states[t.ID] = ts
	return ts, nil
}

func (sw *streamingWrite) close() {
	for _, ts := range sw.states {
		ts.Close()
	}
	sw.ts.Close()
	for _, l := range sw.reads {
		l.Unlock()
	}
	sw.log.Unlock()
	sw.e.stateMu.RUnlock()
}

// commit commits the data published so far (all of it acknowledged:
// b.flush) and waits until the table holds it (meta.BulkTxn.Commit).
// what names the write in a timeout ("a COPY").
func (sw *streamingWrite) commit(what string) error { return sw.b.txn.Commit(what) }

// bulkWrite is the statement side of one streaming commit to a table:
// the checks of its rows; meta.BulkTxn publishes them.
type bulkWrite struct {
	e       *Engine
	d       *catalog.Descriptor
	ts      *tableState
	members []types.Column
	limit   int
	// txn is the commit's publishing, once begun.
	txn *meta.BulkTxn
	// also are the other tables the commit writes (a DELETE's foreign
	// key actions'), after d.
	also []meta.BulkTable

	// hashes of the rows' primary keys, in sorted blocks (the last one
	// is sorted by checkDuplicates).
	seed   maphash.Seed
	blocks [][]uint64
	key    []byte // scratch for check

	// lo and hi are the first and the last key of the rows' longest
	// prefix in increasing key order (hi grows while unsorted is false);
	// the keys after it are hashed, and inPrefix holds the hashes of those
	// between lo and hi.
	lo, hi   []byte
	unsorted bool
	inPrefix []uint64
}

// begin publishes the transaction's intent.
func (b *bulkWrite) begin() error {
	b.seed = maphash.MakeSeed()
	tables := append([]meta.BulkTable{{D: b.d, Log: b.ts.Log(), Members: b.members}}, b.also...)
	txn, err := b.e.tables.BeginBulkTables(tables)
	b.txn = txn
	return err
}

// abort decides the transaction aborted and removes its records
// (meta.BulkTxn.Abort).
func (b *bulkWrite) abort() {
	if b.txn != nil {
		b.txn.Abort()
	}
}

// check enforces on a batch of new rows what checkTableChanges does on
// an insert's: NOT NULL, and that the table does not hold their keys. It
// records what checkDuplicates needs to find the keys that two rows of the
// commit share, whether in one batch or in two: while the keys arrive in
// increasing order (a load of sorted data) no two can be equal and it
// records only the first and the last; after that, the hash of each key,
// and as suspects the hashes of those within the range of that sorted
// prefix.
func (b *bulkWrite) check(changes []exec.Change, taken func(key []byte) (bool, error)) error {
	for _, ch := range changes {
		if err := checkNotNull(b.d, b.ts.cols, ch.Row); err != nil {
			return err
		}
		if b.ts.key == nil {
			continue
		}
		b.key = b.key[:0]
		for _, k := range b.ts.key {
			b.key = exec.AppendKey(b.key, ch.Row[k])
		}
		dup, err := taken(b.key)
		if err != nil {
			return err
		}
		if dup {
			return duplicateKey(b.d, b.ts.cols, b.ts.key, ch.Row)
		}
		if !b.unsorted {
			switch c := bytes.Compare(b.key, b.hi); {
			case b.hi == nil || c > 0:
				if b.lo == nil {
					b.lo = bytes.Clone(b.key)
				}
				b.hi = append(b.hi[:0], b.key...)
				continue
			case c == 0:
				return duplicateKey(b.d, b.ts.cols, b.ts.key, ch.Row)
			}
			b.unsorted = true
		}
		h := maphash.Bytes(b.seed, b.key)
		b.addHash(h)
		if bytes.Compare(b.key, b.lo) >= 0 && bytes.Compare(b.key, b.hi) <= 0 {
			b.inPrefix = append(b.inPrefix, h)
		}
	}
	return nil
}

// add publishes a checked batch as data.
func (b *bulkWrite) add(changes []exec.Change) error { return b.txn.Add(changes) }

// flush waits for the data published so far.
func (b *bulkWrite) flush() error {
	if b.txn == nil {
		return nil
	}
	return b.txn.Flush()
}

func (b *bulkWrite) addHash(h uint64) {
	n := len(b.blocks)
	if n == 0 || len(b.blocks[n-1]) == bulkHashBlock {
		if n > 0 {
			slices.Sort(b.blocks[n-1])
		}
		b.blocks = append(b.blocks, make([]uint64, 0, bulkHashBlock))
		n++
	}
	b.blocks[n-1] = append(b.blocks[n-1], h)
}

// collidingHashes returns the key hashes that occur more than once, by a
// merge of the sorted blocks.
func (b *bulkWrite) collidingHashes() map[uint64]bool {
	if n := len(b.blocks); n > 0 {
		slices.Sort(b.blocks[n-1])
	}
	var out map[uint64]bool
	pos := make([]int, len(b.blocks))
	have, last := false, uint64(0)
	for {
		best := -1
		for i, blk := range b.blocks {
			if pos[i] < len(blk) && (best < 0 || blk[pos[i]] < b.blocks[best][pos[best]]) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		h := b.blocks[best][pos[best]]
		pos[best]++
		if have && h == last {
			if out == nil {
				out = map[uint64]bool{}
			}
			out[h] = true
		}
		have, last = true, h
	}
}

// checkDuplicates fails with 23505 if two rows of the commit have the same
// primary key: the hashes of the keys tell, and hashes that meet are
// looked at exactly, in the commit's data.
func (b *bulkWrite) checkDuplicates(ctx context.Context) error {
	suspects := b.collidingHashes()
	b.blocks = nil
	for _, h := range b.inPrefix {
		if suspects == nil {
			suspects = map[uint64]bool{}
		}
		suspects[h] = true
	}
	b.inPrefix = nil
	if len(suspects) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var dup error
	err := b.txn.ReadBack(ctx, func(changes []exec.Change) error {
		for _, ch := range changes {
			k := rowKey(b.ts.key, ch.Row)
			if !suspects[maphash.Bytes(b.seed, k)] {
				continue
			}
			if seen[string(k)] {
				dup = duplicateKey(b.d, b.ts.cols, b.ts.key, ch.Row)
				return meta.ErrStopReadBack
			}
			seen[string(k)] = true
		}
		return nil
	})
	if dup != nil {
		return dup
	}
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "read back the COPY's rows to check their keys: %v", err)
	}
	return nil
}
