package sql

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"streamdb/exec"
	"streamdb/types"
)

// A transaction block keeps its changes to a table in memory
// (tableWrite.stmts) until they pass the session's
// transaction_spill_memory; then the older statements move to a scratch
// store on disk (blockSpill), one per block, removed at COMMIT, ROLLBACK
// and, after a crash, when the server starts. A spilled table's changes
// are the spill's, then the statements still in memory, in order.
//
// The spill keeps each table's changes twice, both in changelog order:
//
//	'L' table seq          -> sign, identity, row   (the log)
//	'I' table identity seq -> sign, row             (by row identity)
//
// seq is one counter for the whole block, so it orders each table's
// changes. identity is rowKey: the primary key in key encoding, or the
// whole row's value encoding. Either is self-delimiting for a given
// table, so no identity is a proper prefix of another, and the index
// entries of one identity are exactly the keys with its prefix, oldest
// first: the reads of the block look one up without reading the others,
// and a scan of the index meets each identity's changes together.

// scratchStore is a temporary sorted key-value store on disk
// (storage.Scratch).
type scratchStore interface {
	Write(fill func(set func(k, v []byte), del func(k []byte))) error
	Scan(lo, hi []byte, reverse bool, fn func(k, v []byte) (bool, error)) error
	DeleteRange(lo, hi []byte) error
	Close() error
}

// blockSpill is a block's scratch store.
type blockSpill struct {
	db   scratchStore
	next uint64 // the next change's seq
}

// tableSpill is the part of a block's changes to one table that is on
// disk.
type tableSpill struct {
	s     *blockSpill
	id    uint32
	ncols int
	key   []int // primary key columns; nil for a table without one
	// sets are the column sets the changes are also kept by
	// (block_spill_values.go).
	sets [][]int
	// own is the seq of the block's first own change: before it come the
	// commits the block's snapshot holds past the table's state
	// (meta.TxSnapshot.Pending), copied first so that reads find every change
	// under the block's own in one place.
	own uint64
	// from is the seq of the oldest change the reads of this view see
	// (chain, newest, eachIdentity, withValues): 0 for the block's
	// statements, own for its COMMIT, which reads the table as it is
	// now, commits past the block's snapshot included (commitView).
	from uint64
	// until, when bounded, is the seq of the first change these reads do
	// not see: a statement streaming its own changes into the spill reads
	// the table as it was before them (statementView).
	until   uint64
	bounded bool
	// stmts holds the seq at which each spilled statement starts; end
	// is the seq after the table's last spilled change.
	stmts []uint64
	end   uint64
	// doNothing holds the spilled statements that inserted with ON
	// CONFLICT DO NOTHING (txn.doNothing), by their place in stmts.
	doNothing map[int]doNothingStmt
}

// spillChange is one change read back from a spill.
type spillChange struct {
	seq uint64
	exec.Change
}

func spillLogKey(id uint32, seq uint64) []byte {
	k := binary.BigEndian.AppendUint32([]byte{'L'}, id)
	return binary.BigEndian.AppendUint64(k, seq)
}

func spillIndexPrefix(id uint32, identity []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{'I'}, id), identity...)
}

// prefixEnd is the first key after every key that starts with p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// append adds changes (already in changelog order) after the table's
// others.
func (ts *tableSpill) append(changes []exec.Change) error {
	return ts.s.db.Write(func(set func(k, v []byte), _ func(k []byte)) {
		for _, ch := range changes {
			seq := ts.s.next
			ts.s.next++
			identity := rowKey(ts.key, ch.Row)
			row := exec.EncodeViewValue(ch.Row, 0)
			logv := append([]byte{byte(ch.Sign)}, binary.AppendUvarint(nil, uint64(len(identity)))...)
			logv = append(append(logv, identity...), row...)
			set(spillLogKey(ts.id, seq), logv)
			byRow := append([]byte{byte(ch.Sign)}, row...)
			set(binary.BigEndian.AppendUint64(spillIndexPrefix(ts.id, identity), seq), byRow)
			for _, k := range ts.valueKeys(ch.Row, seq) {
				set(k, byRow)
			}
		}
		ts.end = ts.s.next
	})
}

// decode reads a change's sign and row.
func (ts *tableSpill) decode(v []byte) (exec.Change, error) {
	if len(v) < 1 {
		return exec.Change{}, fmt.Errorf("a transaction's spilled change is empty")
	}
	row, _, err := exec.DecodeViewValue(bytes.Clone(v[1:]), ts.ncols)
	return exec.Change{Row: row, Sign: int8(v[0])}, err
}

// sees reports whether the reads of this view see the change seq.
func (ts *tableSpill) sees(seq uint64) bool {
	return seq >= ts.from && (!ts.bounded || seq < ts.until)
}

// statementView returns the spill as a statement that is about to append
// its own changes to it reads it: without them, so that a row the
// statement changed is never read again (the Halloween problem).
func (ts *tableSpill) statementView() *tableSpill {
	v := *ts
	v.until, v.bounded = ts.s.next, true
	return &v
}

// chain returns the changes of the row identity, oldest first.
func (ts *tableSpill) chain(identity []byte) ([]spillChange, error) {
	p := spillIndexPrefix(ts.id, identity)
	var out []spillChange
	err := ts.s.db.Scan(p, prefixEnd(p), false, func(k, v []byte) (bool, error) {
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		if !ts.sees(seq) {
			return true, nil
		}
		ch, err := ts.decode(v)
		out = append(out, spillChange{seq: seq, Change: ch})
		return true, err
	})
	return out, err
}

// commitView returns the spill as its block's COMMIT reads it: the
// block's own changes only.
func (ts *tableSpill) commitView() *tableSpill {
	v := *ts
	v.from = ts.own
	return &v
}

// newest returns the newest change of the row identity of a keyed table.
func (ts *tableSpill) newest(identity []byte) (ch exec.Change, ok bool, err error) {
	p := spillIndexPrefix(ts.id, identity)
	err = ts.s.db.Scan(p, prefixEnd(p), true, func(k, v []byte) (bool, error) {
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		if seq < ts.from {
			return false, nil // the older ones are older still
		}
		if !ts.sees(seq) {
			return true, nil // newer than the view
		}
		var derr error
		ch, derr = ts.decode(v)
		ok = derr == nil
		return false, derr
	})
	return ch, ok, err
}

// eachIdentity hands fn each row identity the spill holds changes of,
// in key order, with its changes, oldest first.
func (ts *tableSpill) eachIdentity(fn func(identity []byte, chain []spillChange) error) error {
	p := spillIndexPrefix(ts.id, nil)
	var cur []byte
	var chain []spillChange
	err := ts.s.db.Scan(p, prefixEnd(p), false, func(k, v []byte) (bool, error) {
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		if !ts.sees(seq) {
			return true, nil
		}
		identity := k[len(p) : len(k)-8]
		if len(chain) > 0 && !bytes.Equal(identity, cur) {
			if err := fn(cur, chain); err != nil {
				return false, err
			}
			chain = chain[:0]
		}
		if len(chain) == 0 {
			cur = append(cur[:0], identity...)
		}
		ch, err := ts.decode(v)
		chain = append(chain, spillChange{seq: seq, Change: ch})
		return true, err
	})
	if err == nil && len(chain) > 0 {
		err = fn(cur, chain)
	}
	return err
}

// eachFirstOwn hands fn each row identity the block changed in the
// spill, in key order, with the first of its changes, decoding no other.
func (ts *tableSpill) eachFirstOwn(fn func(identity []byte, first exec.Change) error) error {
	p := spillIndexPrefix(ts.id, nil)
	var done []byte // the identity whose first own change was handed over
	return ts.s.db.Scan(p, prefixEnd(p), false, func(k, v []byte) (bool, error) {
		identity := k[len(p) : len(k)-8]
		if done != nil && bytes.Equal(identity, done) || binary.BigEndian.Uint64(k[len(k)-8:]) < ts.own {
			return true, nil
		}
		done = append(done[:0], identity...)
		ch, err := ts.decode(v)
		if err == nil {
			err = fn(identity, ch)
		}
		return err == nil, err
	})
}

// eachOwn hands fn the block's own changes in order, batch at a time (the
// batch is reused after fn returns).
func (ts *tableSpill) eachOwn(batchRows int, fn func([]exec.Change) error) error {
	batch := make([]exec.Change, 0, batchRows)
	err := ts.s.db.Scan(spillLogKey(ts.id, ts.own), spillLogKey(ts.id+1, 0), false, func(_, v []byte) (bool, error) {
		n, k := binary.Uvarint(v[1:])
		if k <= 0 {
			return false, fmt.Errorf("a transaction's spilled change is damaged")
		}
		ch, err := ts.decode(append(v[:1:1], v[1+k+int(n):]...))
		if err != nil {
			return false, err
		}
		batch = append(batch, ch)
		if len(batch) == batchRows {
			err = fn(batch)
			clear(batch)
			batch = batch[:0]
		}
		return err == nil, err
	})
	if err == nil && len(batch) > 0 {
		err = fn(batch)
	}
	return err
}

// truncate removes the changes from seq from on: those of the statements
// a ROLLBACK TO undoes.
func (ts *tableSpill) truncate(from uint64) error {
	var index [][]byte
	err := ts.s.db.Scan(spillLogKey(ts.id, from), spillLogKey(ts.id+1, 0), false, func(k, v []byte) (bool, error) {
		n, w := binary.Uvarint(v[1:])
		if w <= 0 {
			return false, fmt.Errorf("a transaction's spilled change is damaged")
		}
		identity := v[1+w : 1+w+int(n)]
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		index = append(index, binary.BigEndian.AppendUint64(spillIndexPrefix(ts.id, identity), seq))
		if len(ts.sets) > 0 {
			ch, err := ts.decode(append(v[:1:1], v[1+w+int(n):]...))
			if err != nil {
				return false, err
			}
			index = append(index, ts.valueKeys(ch.Row, seq)...)
		}
		// The deletes are written a batch at a time, so that an undo of
		// millions of changes holds few keys.
		if len(index) >= changeBatchRows {
			err := ts.deleteIndex(index)
			index = index[:0]
			return err == nil, err
		}
		return true, nil
	})
	if err == nil {
		err = ts.deleteIndex(index)
	}
	if err != nil {
		return err
	}
	ts.end = from
	return ts.s.db.DeleteRange(spillLogKey(ts.id, from), spillLogKey(ts.id+1, 0))
}

func (ts *tableSpill) deleteIndex(keys [][]byte) error {
	return ts.s.db.Write(func(_ func(k, v []byte), del func(k []byte)) {
		for _, k := range keys {
			del(k)
		}
	})
}

// applySigns returns a row identity's count n after signs, as countOf
// applies them: a deletion removes one row if there is one; an insertion
// adds one (under a primary key, only where there is none).
func applySigns(keyed bool, n int, chain []spillChange) int {
	for _, ch := range chain {
		switch {
		case ch.Sign < 0 && n > 0:
			n--
		case ch.Sign > 0 && (!keyed || n == 0):
			n++
		}
	}
	return n
}

// changeBytes estimates the memory one change of row takes in a block.
func changeBytes(row types.Row) int64 {
	n := int64(64 + 24 + 72*len(row))
	for _, d := range row {
		n += int64(len(d.S))
	}
	return n
}

// doNothingOn reports, for txn.doNothingConflict, whether every spilled
// statement that changed the table inserted with ON CONFLICT DO NOTHING
// with the key name as arbiter (all), and whether one did (some). A
// table without a spill has all and not some.
func (ts *tableSpill) doNothingOn(name string) (all, some bool) {
	if ts == nil {
		return true, false
	}
	for i, start := range ts.stmts {
		end := ts.end
		if i+1 < len(ts.stmts) {
			end = ts.stmts[i+1]
		}
		if start == end {
			continue // changed nothing
		}
		dn, ok := ts.doNothing[i]
		if !ok || dn.n != int(end-start) || !dn.arbiters[name] {
			return false, false
		}
		some = true
	}
	return true, some
}
