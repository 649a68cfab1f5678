package exec

import (
	"bytes"

	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// upsertOp turns the rows an envelopeDecoder reads into the changes of
// the table a stream with an envelope is stored as: an upsert of a key
// that holds a row retracts that row first, a tombstone retracts the
// row under its key (and is dropped when there is none), and a truncate
// retracts every row. An upsert equal to the row it replaces changes
// nothing. So the materialize operator after it, keyed by the same key,
// and every view reading the table through an edge, see -old +new.
//
// The current row of a key is the table's own state: Pebble's committed
// rows under the table's prefix, overlaid by the rows this operator sent
// in epochs Pebble has not committed yet (recent). It keeps no state of
// its own, so checkpoints, recovery and ROLLBACK TO restore it with the
// table.
type upsertOp struct {
	key       []int
	ncols     int
	prefix    []byte // the table's rows (ViewTablePrefix)
	store     *storage.Store
	committed func() uint64
	next      Operator

	// recent maps a key (its keyenc) to its row as sent (nil: none), for
	// keys sent in this epoch (epoch 0) or in epochs not yet committed.
	recent map[string]recentRow
	// sent lists the keys sent in each closed, uncommitted epoch, oldest
	// first; touched those of the open one.
	sent    []epochKeys
	touched []string
	keyBuf  []byte
	getBuf  []byte
}

type recentRow struct {
	row   types.Row
	epoch uint64
}

type epochKeys struct {
	epoch uint64
	keys  []string
}

func newUpsertOp(key []int, ncols int, prefix []byte, store *storage.Store, committed func() uint64, next Operator) *upsertOp {
	return &upsertOp{key: key, ncols: ncols, prefix: prefix, store: store, committed: committed, next: next, recent: map[string]recentRow{}}
}

// current returns the row under key kb, nil for none.
func (op *upsertOp) current(kb []byte) (types.Row, error) {
	if r, ok := op.recent[string(kb)]; ok {
		return r.row, nil
	}
	op.getBuf = append(append(op.getBuf[:0], op.prefix...), kb...)
	v, ok, err := op.store.Get(op.getBuf)
	if err != nil || !ok {
		return nil, err
	}
	row, _, err := DecodeViewValue(v, op.ncols)
	return row, err
}

func (op *upsertOp) set(kb []byte, row types.Row) {
	k := string(kb)
	if r, ok := op.recent[k]; !ok || r.epoch != 0 {
		op.touched = append(op.touched, k)
	}
	op.recent[k] = recentRow{row: row}
}

func (op *upsertOp) Push(c *Chunk) error {
	out := &Chunk{Rows: make([]types.Row, 0, c.Len()+c.Len()/2), Signs: make([]int8, 0, c.Len()+c.Len()/2)}
	for i, row := range c.Rows {
		if len(row) == 0 {
			if err := op.truncate(out); err != nil {
				return err
			}
			continue
		}
		kb := op.keyBuf[:0]
		for _, k := range op.key {
			kb = keyenc.Append(kb, row[k])
		}
		op.keyBuf = kb
		cur, err := op.current(kb)
		if err != nil {
			return err
		}
		if c.Signs[i] < 0 {
			if cur != nil {
				out.Append(cur, Delete)
				op.set(kb, nil)
			}
			continue
		}
		if cur != nil {
			if sameRow(cur, row) {
				continue
			}
			out.Append(cur, Delete)
		}
		out.Append(row, Insert)
		op.set(kb, row)
	}
	if out.Len() == 0 {
		return nil
	}
	return op.next.Push(out)
}

// truncate retracts every row the table holds.
func (op *upsertOp) truncate(out *Chunk) error {
	seen := map[string]bool{}
	var keys [][]byte
	err := storage.ScanPrefix(op.store.DB(), op.prefix, func(k, v []byte) error {
		kb := bytes.Clone(k[len(op.prefix):])
		if _, ok := op.recent[string(kb)]; ok {
			return nil
		}
		row, _, err := DecodeViewValue(bytes.Clone(v), op.ncols)
		if err != nil {
			return err
		}
		seen[string(kb)] = true
		keys = append(keys, kb)
		out.Append(row, Delete)
		return nil
	})
	if err != nil {
		return err
	}
	for k, r := range op.recent {
		if r.row != nil && !seen[k] {
			out.Append(r.row, Delete)
			keys = append(keys, []byte(k))
		}
	}
	for _, kb := range keys {
		op.set(kb, nil)
	}
	return nil
}

// sameRow reports whether a and b hold the same values (as stored).
func sameRow(a, b types.Row) bool {
	return bytes.Equal(keyenc.AppendRowValue(nil, a), keyenc.AppendRowValue(nil, b))
}

func (op *upsertOp) Barrier(e Epoch) error {
	for _, k := range op.touched {
		r := op.recent[k]
		r.epoch = e.ID
		op.recent[k] = r
	}
	if len(op.touched) > 0 {
		op.sent = append(op.sent, epochKeys{epoch: e.ID, keys: op.touched})
		op.touched = nil
	}
	committed := op.committed()
	for len(op.sent) > 0 && op.sent[0].epoch <= committed {
		for _, k := range op.sent[0].keys {
			if r, ok := op.recent[k]; ok && r.epoch == op.sent[0].epoch {
				delete(op.recent, k)
			}
		}
		op.sent = op.sent[1:]
	}
	return op.next.Barrier(e)
}

// addEnvelopeSource adds the input of the pipeline of a stream with an
// envelope (stored as table s.Object): its subject's messages, read by an
// envelopeDecoder into an upsertOp in front of next.
func (b *builder) addEnvelopeSource(s *plan.Scan, next Operator) error {
	cols, missing, err := MessageColumns(s)
	if err != nil {
		return err
	}
	rows := NewMessageDecoder(cols, missing).WithMetadata(s.Object)
	key := TableKey(s)
	op := newUpsertOp(key, len(cols), ViewTablePrefix(s.Object.ID), b.rt.store, b.rt.CommittedEpoch, next)
	if err := b.addSource(s, newEnvelopeDecoder(s.Object, rows, key), op); err != nil {
		return err
	}
	// Its subject is a stream's input, not a changelog of its own.
	b.p.sources[len(b.p.sources)-1].table = false
	b.setTxnCutter(s, b.p.sources[len(b.p.sources)-1])
	return nil
}
