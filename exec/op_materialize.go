package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// MaterializeMode says how a view's rows are keyed in its state table.
type MaterializeMode int

const (
	// Keyed: the view has a unique key (e.g. its GROUP BY columns); the
	// table maps key -> row.
	Keyed MaterializeMode = iota
	// AppendOnly: the input never retracts; rows get increasing row ids.
	AppendOnly
	// Counted: any input; the table maps the whole row -> its multiplicity.
	Counted
	// CountedSet: Counted's table, over an input that is a changelog of a
	// set (each row it inserts is absent, each row it deletes present), so
	// every multiplicity is 0 or 1 and is written without being read. It
	// is chosen at each start from what runs (builder.inputKey: a view
	// that projects the key of the keyed view it reads), never stored: its
	// table is Counted's, with every count 1.
	CountedSet
)

// materializeOp writes a view's changes into its state table. Rows are
// stored as a value of (uvarint multiplicity, key-encoded row), so readers
// decode every mode alike.
type materializeOp struct {
	mode    MaterializeMode
	keyCols []int
	prefix  []byte // the view's table
	// vnodes is the view's vnode count when each row's key (after
	// prefix) starts with the vnode of the rest of it
	// (catalog.Descriptor.RowVNodes), else 0. Every key the operator
	// handles (pending writes, counts, index entries' row keys) is that
	// whole key.
	vnodes  int
	metaKey []byte // AppendOnly: next row id

	nextRowID uint64
	pending   pendingWrites // the epoch's writes, newest per key
	// epochLimit bounds pending for a view (nil for a table's own
	// pipeline, and in tests); view names it in the error.
	epochLimit *epochMemoryLimit
	view       string
	keyBuf     []byte // scratch for Push

	// Counted: multiplicities of rows, a bounded cache over the view's
	// table with the same rules as the aggregate's group cache (an entry
	// is evicted only once Pebble committed its last write; a row whose
	// count fell to zero stays cached until its deletion commits).
	counts  map[string]countEntry
	touched []string // rows counted in this epoch
	store   *storage.Store
	limit   groupLimit
	lazy    bool
	miss    missRule
	// keyBufGet is scratch for reading a count.
	keyBufGet []byte
	// rowsOut counts the changes the view receives (nil in tests).
	rowsOut prometheus.Counter
	// hub passes the changes applied, and the barriers, to the pipelines
	// that read this one (nil in tests); marker, if set, is written at
	// the first barrier (attachedMarker).
	hub    *edgeHub
	marker []byte
	// altered is set in the first epoch after an ALTER; retract holds the
	// old rows it sends downstream first (alter.go).
	altered bool
	retract []types.Row
	// alterEpoch is, after an ALTER, the epoch whose commit makes the
	// altered view's first output (retractions and re-sent rows) visible:
	// MaxUint64 until its first barrier, 0 when not altered. Waits for a
	// view (ALTER, FLUSH) read it from other goroutines.
	alterEpoch atomic.Uint64
	// firstOut: alterEpoch waits for the first barrier's epoch, as after
	// an ALTER (a VALUES branch sends its rows then).
	firstOut bool
	// indexes keep the object's secondary indexes (index.go), written in
	// the same epoch batch as the rows.
	indexes []*indexWriter
	// spills (a table's own pipeline) moves the epoch's writes into spill,
	// as sorted runs in files, once they hold spillAt bytes; the runtime
	// commits the epoch's batch together with the runs as one atomic
	// ingestion (storage.CommitSpilled), so an epoch of any size (one
	// commit of millions of rows) is still atomic, in bounded memory.
	spills bool
	spill  *storage.Spill
}

// spillAt is the size of an epoch's pending writes past which a table's
// materialize moves them into its spill.
const spillAt = 32 << 20

// maybeSpill moves the epoch's pending writes into the spill once they
// are large. Later runs are newer, so the newest write of a key wins as
// it does in pending.
func (op *materializeOp) maybeSpill() error {
	if !op.spills || op.pending.size() < spillAt {
		return nil
	}
	if op.spill == nil {
		sp, err := op.store.NewSpill()
		if err != nil {
			return err
		}
		op.spill = sp
	}
	if err := op.pending.writeRun(op.spill, op.prefix); err != nil {
		return err
	}
	for _, ix := range op.indexes {
		if err := ix.pending.writeRun(op.spill, ix.prefix); err != nil {
			return err
		}
	}
	return nil
}

// takeSpill hands over the epoch's spilled writes (nil if none), which
// the runtime commits with the epoch's batch.
func (op *materializeOp) takeSpill() *storage.Spill {
	sp := op.spill
	op.spill = nil
	return sp
}

// alterVisible reports whether the view's output since its ALTER is
// committed, given the committed epoch.
func (op *materializeOp) alterVisible(committed uint64) bool {
	return op.alterEpoch.Load() <= committed
}

type countEntry struct {
	n       int64
	written uint64 // epoch of the last write; 0 while touched in this one
}

func newMaterializeOp(mode MaterializeMode, keyCols []int, prefix, metaKey []byte, store *storage.Store, limit groupLimit) (*materializeOp, error) {
	op := &materializeOp{mode: mode, keyCols: keyCols, prefix: prefix, metaKey: metaKey, store: store, limit: limit}
	switch mode {
	case AppendOnly:
		v, ok, err := store.Get(metaKey)
		if err != nil {
			return nil, err
		}
		if ok && len(v) == 8 {
			op.nextRowID = binary.BigEndian.Uint64(v)
		}
	case Counted:
		op.counts = map[string]countEntry{}
		op.lazy = limit.max != nil && limit.max() > 0
		if op.lazy {
			var err error
			if op.miss, err = newMissRule(store.DB(), prefix); err != nil {
				return nil, err
			}
			break
		}
		err := storage.ScanPrefix(store.DB(), prefix, func(k, v []byte) error {
			n, _ := binary.Uvarint(v)
			op.counts[string(k[len(prefix):])] = countEntry{n: int64(n)}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return op, nil
}

// EncodeViewValue is the stored form of a row with its multiplicity.
func EncodeViewValue(row types.Row, count uint64) []byte {
	return keyenc.AppendRowValue(binary.AppendUvarint(nil, count), row)
}

// DecodeViewValue reverses EncodeViewValue.
func DecodeViewValue(v []byte, ncols int) (types.Row, uint64, error) {
	n, k := binary.Uvarint(v)
	if k <= 0 {
		return nil, 0, fmt.Errorf("view row: bad multiplicity")
	}
	row, _, err := keyenc.DecodeRow(v[k:], ncols)
	return row, n, err
}

func (op *materializeOp) Push(c *Chunk) error {
	if op.retract != nil {
		op.flushRetract()
	}
	if op.rowsOut != nil {
		op.rowsOut.Add(float64(c.Len()))
	}
	// fwd collects the changes applied, for the readers of this view:
	// every row, except deletes of rows a multiset does not hold.
	var fwd *Chunk
	if op.hub != nil && op.hub.readers() {
		fwd = &Chunk{Rows: make([]types.Row, 0, c.Len()), Signs: make([]int8, 0, c.Len())}
		defer op.hub.forward(fwd)
	}
	for i, row := range c.Rows {
		if i&1023 == 1023 {
			if err := op.checkEpochMemory(); err != nil {
				return err
			}
		}
		sign := c.Signs[i]
		kb := op.rowKeyStart(op.keyBuf)
		switch op.mode {
		case Keyed, CountedSet:
			if op.mode == Keyed {
				for _, j := range op.keyCols {
					kb = keyenc.Append(kb, row[j])
				}
			} else {
				kb = keyenc.AppendRowValue(kb, row)
			}
			op.rowKeyDone(kb)
			if sign > 0 {
				op.pending.set(kb, row, 1)
			} else {
				op.pending.del(kb)
			}
			for _, ix := range op.indexes {
				ix.note(row, kb, sign > 0)
			}
			if fwd != nil {
				fwd.Append(row, sign)
			}
		case AppendOnly:
			if sign < 0 {
				return fmt.Errorf("internal error: retraction reached an append-only view")
			}
			kb = binary.BigEndian.AppendUint64(kb, op.nextRowID)
			op.rowKeyDone(kb)
			op.nextRowID++
			op.pending.setNew(kb, row, 1)
			for _, ix := range op.indexes {
				ix.note(row, kb, true)
			}
			if fwd != nil {
				fwd.Append(row, sign)
			}
		case Counted:
			kb = keyenc.AppendRowValue(kb, row)
			op.rowKeyDone(kb)
			ent, err := op.count(kb)
			if err != nil {
				return err
			}
			if ent.written != 0 {
				op.touched = append(op.touched, string(kb))
			}
			n := ent.n + int64(sign)
			if fwd != nil && (sign > 0 || ent.n > 0) {
				fwd.Append(row, sign)
			}
			if n <= 0 {
				n = 0
				op.pending.del(kb)
			} else {
				op.pending.set(kb, row, uint64(n))
			}
			for _, ix := range op.indexes {
				ix.note(row, kb, n > 0)
			}
			switch {
			case n == 0 && !op.lazy:
				delete(op.counts, string(kb))
			default:
				op.counts[string(kb)] = countEntry{n: n}
			}
		}
		op.keyBuf = kb
	}
	if err := op.maybeSpill(); err != nil {
		return err
	}
	return op.checkEpochMemory()
}

// rowKeyStart starts a row key in buf's storage: room for its vnode
// when the rows carry one.
func (op *materializeOp) rowKeyStart(buf []byte) []byte {
	if op.vnodes > 0 {
		return append(buf[:0], 0, 0)
	}
	return buf[:0]
}

// rowKeyDone puts, into the room rowKeyStart left in row key kb, the
// vnode of the key after it.
func (op *materializeOp) rowKeyDone(kb []byte) {
	if op.vnodes > 0 {
		binary.BigEndian.PutUint16(kb, storage.VNodeOf(kb[storage.VNodeLen:], op.vnodes))
	}
}

// count returns a row's multiplicity entry, reading it from Pebble when
// it is not cached. A new entry reports written = 1 so that Push records
// it as touched.
func (op *materializeOp) count(kb []byte) (countEntry, error) {
	if ent, ok := op.counts[string(kb)]; ok {
		op.miss.hit()
		return ent, nil
	}
	if !op.lazy || !op.miss.mustRead(string(kb)) {
		return countEntry{written: 1}, nil
	}
	op.keyBufGet = append(append(op.keyBufGet[:0], op.prefix...), kb...)
	v, found, err := op.store.Get(op.keyBufGet)
	if err != nil || !found {
		return countEntry{written: 1}, err
	}
	n, _ := binary.Uvarint(v)
	return countEntry{n: int64(n), written: 1}, nil
}

func (op *materializeOp) Barrier(e Epoch) error {
	if op.retract != nil {
		op.flushRetract()
	}
	if op.altered {
		if err := clearAlterMarker(e.Batch, viewIDOf(op.metaKey)); err != nil {
			return err
		}
		op.altered = false
		op.alterEpoch.Store(e.ID)
	}
	if op.firstOut {
		op.firstOut = false
		op.alterEpoch.Store(e.ID)
	}
	if err := op.pending.writeTo(e.Batch, op.prefix); err != nil {
		return err
	}
	for _, ix := range op.indexes {
		if err := ix.pending.writeTo(e.Batch, ix.prefix); err != nil {
			return err
		}
	}
	if op.marker != nil {
		if err := e.Batch.Set(op.marker, nil, nil); err != nil {
			return err
		}
		op.marker = nil
	}
	if op.hub != nil {
		if err := op.hub.sinks.write(e.Batch, e.ID); err != nil {
			return err
		}
		defer op.hub.barrier(e.ID)
	}
	if op.mode == Counted {
		op.settleCounts(e.ID)
	}
	if op.mode == AppendOnly {
		return e.Batch.Set(op.metaKey, binary.BigEndian.AppendUint64(op.keyBuf[:0], op.nextRowID), nil)
	}
	return nil
}

// settleCounts stamps the rows counted in epoch id with it and, once the
// cache is over its bound, evicts entries whose writes Pebble committed.
func (op *materializeOp) settleCounts(id uint64) {
	for _, k := range op.touched {
		if ent, ok := op.counts[k]; ok {
			ent.written = id
			op.counts[k] = ent
		}
	}
	op.touched = op.touched[:0]
	if op.lazy {
		evictCommitted(op.limit, op.counts, func(e countEntry) uint64 {
			if e.written == 0 {
				return math.MaxUint64 // counted in this epoch, not written yet
			}
			return e.written
		}, &op.miss)
	}
}
