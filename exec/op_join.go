package exec

import (
	"encoding/binary"
	"fmt"
	"slices"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// joinOp is a streaming equi-join with retractions (a symmetric hash
// join). Each side keeps its rows by join key with their multiplicity and,
// for outer sides, how many rows of the other side they match, so that a
// change on either side emits exactly the result rows it adds or removes:
// joined rows, and NULL-padded rows that appear or vanish when a row's
// match count moves between zero and non-zero.
type joinOp struct {
	kind   plan.JoinKind
	keys   [2][]expr.Expr
	cond   expr.Expr
	widths [2]int
	outer  [2]bool
	state  [2]map[string]*joinBucket // join key -> its rows on that side
	dirty  []*joinEntry              // entries changed this epoch, in order
	prefix []byte
	next   Operator
	// barriers counts the inputs that delivered the current barrier.
	barriers int
	// format is how the state is laid out in Pebble (see joinStateFormat).
	format joinStateFormat
	// nextID numbers new entries under joinStateByID, new pages under
	// joinStateByPage.
	nextID uint64
	// packed: under joinStateByPage, the sides whose rows share pages
	// (append-only inputs); dirtyPages: the pages to write at the barrier.
	packed     [2]bool
	dirtyPages []*joinPage
	// cache: under joinStateByKey, how each side's keys are read on a
	// miss and evicted (joinstate_cache.go).
	cache joinCache
	// vnodes, under joinStateByKey, is the view's vnode count when each
	// page key carries the vnode of its join key after its side
	// (catalog.DataflowJoinVNodes on), else 0.
	vnodes int

	// Scratch reused across rows: the join key, a row's encoding.
	keyBuf, rowBuf []byte
	// appendKey encodes join keys (keyAppender); the builder sets it
	// before any row arrives.
	appendKey func([]byte, types.Datum) []byte
	// errs records rows whose join key fails to evaluate (skipped) and
	// pairs whose residual condition fails (taken as not matching), see
	// viewErrors; nil stops the view on either.
	errs *viewErrors
	// The barrier's writes, and scratch for a state key and value.
	pending        pendingWrites
	keyOut, valOut []byte
}

// joinEntry is a row on one side, with its multiplicity (equal rows share
// an entry, except on listed sides: see joinBucket). A join of a stream keeps
// millions, so it is kept small (80 bytes; pointers first, which is all the
// collector scans).
type joinEntry struct {
	page   *joinPage // under joinStateByPage: its page, from its first barrier
	key    string
	rowKey string // the row's encoding (keyenc.AppendRowValue)
	// row is the decoded row, made on first use (see rowOf); most entries
	// never need one.
	row     *types.Row
	id      uint64 // under joinStateByID: the entry's state key
	count   int64  // multiplicity
	matches int64  // rows of the other side it matches (outer sides)
	side    byte
	dirty   bool // in op.dirty for the current epoch
}

// joinStateFormat is the layout of a join's state in Pebble; a view keeps
// the one it was created with (exec's dataflow layouts).
type joinStateFormat int

const (
	// joinStateRowInKey: key side|len(join key)|join key|row, value
	// counts. (Format 2 put the row after the counts too; the move to
	// DataflowNarrowRows, migrate_join.go, rewrites such values.) This
	// layout, joinStateByID and joinStateByPage are no longer built for
	// views (formats before catalog.DataflowMinSupported, moved forward
	// at start by migrate_join*.go); the migration tests write them as
	// the old state.
	joinStateRowInKey joinStateFormat = iota
	// joinStateByID: key = the entry's id (8 bytes, big-endian), value
	// side|counts|len(join key)|join key|row. Ids grow, so the entries
	// an epoch adds sort after all older ones: Pebble appends them instead
	// of merging them into the whole table again at every compaction (the
	// join key of a bid, its price, is random). The join never reads its
	// state by key, only all of it at start.
	joinStateByID
	// joinStateByPage: key = a page id (8 bytes, big-endian, growing), value
	// = the page's entries, each side|counts|join key|row (join_pages.go).
	joinStateByPage
	// joinStateByKey: key = side|len(join key)|join key|page id, value =
	// the page's entries, each counts|len(row)|row: a join key's rows on a
	// side are one key range, read when the key misses the cache
	// (joinstate_keyed.go).
	joinStateByKey
)

// newJoinOp restores the join's state from store, laid out as format,
// into memory whole. packed says which sides' rows share pages under
// joinStateByPage and joinStateByKey.
func newJoinOp(j *plan.Join, prefix []byte, store storage.Reader, format joinStateFormat, packed [2]bool, next Operator) (*joinOp, error) {
	return newCachedJoinOp(j, prefix, store, format, 0, packed, groupLimit{}, nil, next)
}

// newCachedJoinOp is newJoinOp with, under joinStateByKey, page keys
// carrying the vnodes of their join keys among vnodes (0: none), at most
// limit.max() keys per side in memory (0 or no limit: all), and rows
// freed as expire says (nil: never; all are kept in memory then).
func newCachedJoinOp(j *plan.Join, prefix []byte, store storage.Reader, format joinStateFormat, vnodes int, packed [2]bool, limit groupLimit, expire *joinExpiry, next Operator) (*joinOp, error) {
	op := &joinOp{
		format: format, packed: packed, vnodes: vnodes,
		kind: j.Kind, keys: [2][]expr.Expr{j.LeftKeys, j.RightKeys}, cond: j.Cond,
		widths: [2]int{len(j.Left.Schema()), len(j.Right.Schema())},
		outer:  [2]bool{j.Kind == plan.LeftJoin || j.Kind == plan.FullJoin, j.Kind == plan.RightJoin || j.Kind == plan.FullJoin},
		state:  [2]map[string]*joinBucket{{}, {}},
		prefix: prefix, next: next, appendKey: keyenc.Append,
	}
	if format == joinStateByKey {
		op.cache.expire = expire
		if expire != nil {
			limit = groupLimit{}
		}
		return op, op.cache.start(op, store, limit)
	}
	err := storage.ScanPrefix(store, prefix, func(k, v []byte) error {
		if format == joinStateByPage {
			return op.restorePage(k[len(prefix):], v)
		}
		e, jk, err := op.decodeEntry(k[len(prefix):], v)
		if err != nil {
			return err
		}
		b := op.bucket(e.side, jk)
		e.key = b.key
		// The row stays encoded until it first matches (rowOf).
		b.put(e, false)
		return nil
	})
	return op, err
}

// decodeEntry reads one stored entry (key after the prefix, value) and
// returns it with its join key.
func (op *joinOp) decodeEntry(k, v []byte) (*joinEntry, []byte, error) {
	if op.format == joinStateByID {
		if len(k) != 8 {
			return nil, nil, fmt.Errorf("join state: bad entry")
		}
		e, jk, row, err := readEntryHead(v)
		if err != nil {
			return nil, nil, err
		}
		e.id = binary.BigEndian.Uint64(k)
		op.nextID = max(op.nextID, e.id+1)
		e.rowKey = string(row)
		return e, jk, nil
	}
	if len(k) < 1 || k[0] > 1 {
		return nil, nil, fmt.Errorf("join state: bad key")
	}
	jk, row, err := readLenPrefixed(k[1:])
	if err != nil {
		return nil, nil, err
	}
	// The value holds the counts.
	e := &joinEntry{side: k[0], rowKey: string(row)}
	if v, err = readVarint(v, &e.count); err != nil {
		return nil, nil, err
	}
	if _, err = readVarint(v, &e.matches); err != nil {
		return nil, nil, err
	}
	return e, jk, nil
}

// bucket returns side's bucket for join key, made if there is none.
func (op *joinOp) bucket(side byte, key []byte) *joinBucket {
	b := op.state[side][string(key)]
	if b == nil {
		b = &joinBucket{key: string(key)}
		op.state[side][b.key] = b
	}
	return b
}

// joinBucket holds one side's rows with one join key. Most keys have a
// single distinct row on a side (a bid's price, an auction's id), so the
// first row stays inline. The others are kept by row encoding, so that a
// row arriving again (or retracted) finds its entry; or, on a side that
// never retracts (listed), in a plain list, where equal rows are separate
// entries: no map entry and no hashing of the row per insert.
type joinBucket struct {
	key  string
	one  *joinEntry            // nil when empty or removed
	more map[string]*joinEntry // the others, by row
	list []*joinEntry          // the others, on a listed side
	// Under joinStateByKey: the epoch of the bucket's last write (it may
	// leave the cache once Pebble committed it), and on a packed side the
	// page its new rows go to.
	written uint64
	tail    *joinPage
}

// get returns an entry of the row encoded as rowKey, or nil.
func (b *joinBucket) get(rowKey []byte) *joinEntry {
	if b.one != nil && b.one.rowKey == string(rowKey) {
		return b.one
	}
	if e := b.more[string(rowKey)]; e != nil {
		return e
	}
	for _, e := range b.list {
		if e.rowKey == string(rowKey) {
			return e
		}
	}
	return nil
}

// put adds e; unless listed, the bucket must not hold its row.
func (b *joinBucket) put(e *joinEntry, listed bool) {
	switch {
	case b.one == nil:
		b.one = e
	case listed:
		b.list = append(b.list, e)
	default:
		if b.more == nil {
			b.more = map[string]*joinEntry{}
		}
		b.more[e.rowKey] = e
	}
}

func (b *joinBucket) remove(e *joinEntry) {
	if b.one == e {
		b.one = nil
		return
	}
	if i := slices.Index(b.list, e); i >= 0 {
		last := len(b.list) - 1
		b.list[i], b.list[last] = b.list[last], nil
		b.list = b.list[:last]
		return
	}
	delete(b.more, e.rowKey)
}

func (b *joinBucket) empty() bool { return b.one == nil && len(b.more) == 0 && len(b.list) == 0 }

// all yields the bucket's entries; a nil bucket has none.
func (b *joinBucket) all(yield func(*joinEntry) bool) {
	if b == nil {
		return
	}
	if b.one != nil && !yield(b.one) {
		return
	}
	for _, e := range b.more {
		if !yield(e) {
			return
		}
	}
	for _, e := range b.list {
		if !yield(e) {
			return
		}
	}
}

// port returns the Operator that feeds side (0 left, 1 right).
func (op *joinOp) port(side byte) Operator { return &joinPort{op: op, side: side} }

type joinPort struct {
	op   *joinOp
	side byte
	out  outputChunk
}

// Push sends the changes c's rows produce downstream in chunks of about
// chunkRows (one input row may produce many: a key most rows share), so
// that what one input chunk produces is never held at once.
func (p *joinPort) Push(c *Chunk) error {
	out := p.out.get(p.op.next)
	for i, row := range c.Rows {
		if err := p.op.apply(p.side, row, int64(c.Signs[i]), out); err != nil {
			return err
		}
		if out.Len() >= chunkRows {
			if err := p.op.next.Push(out); err != nil {
				return err
			}
			out = p.out.get(p.op.next)
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return p.op.next.Push(out)
}

func (p *joinPort) Barrier(e Epoch) error { return p.op.barrier(e) }

// joined builds the output row from a row of side and a row of the other.
func (op *joinOp) joined(side byte, row, other types.Row) types.Row {
	if side == 0 {
		return concatRows(row, other)
	}
	return concatRows(other, row)
}

// padded builds the NULL-extended output row of a row of side.
func (op *joinOp) padded(side byte, row types.Row) types.Row {
	return op.joined(side, row, nullRow(op.widths[1-side]))
}

func emitN(out *Chunk, row types.Row, sign int8, n int64) {
	for range n {
		out.Append(row, sign)
	}
}

// apply processes one change (sign +1 or -1) of one row on side.
//
// It allocates only what it keeps: output rows come from out's slab (a
// candidate that fails the residual condition gives its datums back), and
// map keys are built in scratch buffers and copied only for new entries.
func (op *joinOp) apply(side byte, row types.Row, sign int64, out *Chunk) error {
	kb, ok, err := joinKey(op.keys[side], row, op.keyBuf, op.appendKey)
	op.keyBuf = kb
	if err != nil {
		// Nothing changed yet: the row is skipped whole, and so is its
		// retraction, which fails alike.
		return op.errs.skip("join", err)
	}
	if !ok {
		// A NULL key matches nothing: outer sides pass it padded.
		if op.outer[side] {
			out.Append(op.padded(side, row), int8(sign))
		}
		return nil
	}
	other := 1 - side
	ob, err := op.probe(other, kb)
	if err != nil {
		return err
	}
	var matches int64
	for e := range ob.all {
		erow, err := op.rowOf(e)
		if err != nil {
			return err
		}
		j := out.newRow(len(row) + len(erow))
		if side == 0 {
			copy(j[copy(j, row):], erow)
		} else {
			copy(j[copy(j, erow):], row)
		}
		pass, err := joinMatches(op.cond, j)
		if err != nil {
			// The pair's condition fails: the pair does not match. This
			// depends only on the two rows, so whichever of them comes
			// second (and a retraction of either) decides alike.
			if err := op.errs.skip("join condition", err); err != nil {
				return err
			}
			pass = false
		}
		if !pass {
			continue // j's datums are handed out again by the next newRow
		}
		matches += e.count
		if !op.outer[other] {
			out.keepRow(j, int8(sign))
			emitN(out, j, int8(sign), e.count-1)
			continue
		}
		// The padded row leaves before the first match and comes back
		// after the last one (in this order: a keyed view may key both
		// rows alike). padded allocates its own row, so j stays intact.
		before := e.matches
		e.matches += sign
		if before == 0 && e.matches > 0 {
			emitN(out, op.padded(other, erow), Delete, e.count)
		}
		op.markDirty(e)
		out.keepRow(j, int8(sign))
		emitN(out, j, int8(sign), e.count-1)
		if before > 0 && e.matches == 0 {
			emitN(out, op.padded(other, erow), Insert, e.count)
		}
	}
	if op.outer[side] && matches == 0 {
		out.Append(op.padded(side, row), int8(sign))
	}
	op.rowBuf = keyenc.AppendRowValue(op.rowBuf[:0], row)
	b, err := op.lookup(side, kb)
	if err != nil {
		return err
	}
	var e *joinEntry
	if sign < 0 || !op.listed(side) {
		e = b.get(op.rowBuf)
	}
	if e == nil {
		// Only the encoding is kept: most rows never match (rowOf).
		e = &joinEntry{side: side, key: b.key, rowKey: string(op.rowBuf), id: op.nextID}
		op.nextID++
		b.put(e, op.listed(side))
		op.cache.added(op, side, e, row)
	}
	e.count += sign
	e.matches = matches
	op.markDirty(e)
	if e.count <= 0 {
		op.dropEntry(b, e)
	}
	return nil
}

// listed reports whether side's buckets list their rows rather than key
// them by row: packed sides of paged state, whose input never retracts
// and whose equal rows can be separate entries (each has its page, not a
// state key made of the row).
func (op *joinOp) listed(side byte) bool {
	return (op.format == joinStateByPage || op.format == joinStateByKey) && op.packed[side]
}

// dropEntry removes e, whose count fell to zero, from its bucket b. An
// emptied bucket leaves the map, except in a cache that reads misses from
// Pebble: there it stays until its deletion commits (joinCache.evict).
func (op *joinOp) dropEntry(b *joinBucket, e *joinEntry) {
	b.remove(e)
	op.cache.removed(e)
	if b.empty() && !op.cache.lazy {
		delete(op.state[e.side], b.key)
	}
}

// rowOf returns e's row, decoded from its encoding on first use and kept.
// Most rows of a join never match (a bid joined with its window's highest
// price), so keeping them only encoded saves their datums: memory, and
// pointers the collector would scan.
func (op *joinOp) rowOf(e *joinEntry) (types.Row, error) {
	if e.row != nil {
		return *e.row, nil
	}
	if op.widths[e.side] == 0 {
		return nil, nil
	}
	r, _, err := keyenc.DecodeRow([]byte(e.rowKey), op.widths[e.side])
	if err != nil {
		return nil, fmt.Errorf("join state: %w", err)
	}
	e.row = &r
	return r, nil
}

// appendStateKeySuffix appends e's state key after the operator's prefix.
func (op *joinOp) appendStateKeySuffix(k []byte, e *joinEntry) []byte {
	if op.format == joinStateByID {
		return binary.BigEndian.AppendUint64(k, e.id)
	}
	k = append(k, e.side)
	k = binary.AppendUvarint(k, uint64(len(e.key)))
	k = append(k, e.key...)
	return append(k, e.rowKey...)
}

// appendStateValue appends e's state value.
func (op *joinOp) appendStateValue(v []byte, e *joinEntry) []byte {
	if op.format == joinStateByID {
		return append(appendEntryHead(v, e), e.rowKey...)
	}
	v = binary.AppendVarint(v, e.count)
	return binary.AppendVarint(v, e.matches)
}

// appendEntryHead appends what the formats keyed by id or page store of
// an entry before its row: side|count|matches|len(join key)|join key.
func appendEntryHead(v []byte, e *joinEntry) []byte {
	v = append(v, e.side)
	v = binary.AppendVarint(v, e.count)
	v = binary.AppendVarint(v, e.matches)
	v = binary.AppendUvarint(v, uint64(len(e.key)))
	return append(v, e.key...)
}

// readEntryHead reads what appendEntryHead wrote into a new entry, and
// returns it with its join key and the bytes after.
func readEntryHead(v []byte) (e *joinEntry, jk, rest []byte, err error) {
	if len(v) < 1 || v[0] > 1 {
		return nil, nil, nil, fmt.Errorf("join state: bad entry")
	}
	e = &joinEntry{side: v[0]}
	if v, err = readVarint(v[1:], &e.count); err != nil {
		return nil, nil, nil, err
	}
	if v, err = readVarint(v, &e.matches); err != nil {
		return nil, nil, nil, err
	}
	if jk, rest, err = readLenPrefixed(v); err != nil {
		return nil, nil, nil, err
	}
	return e, jk, rest, nil
}

// readLenPrefixed reads a uvarint length and that many bytes.
func readLenPrefixed(v []byte) (field, rest []byte, err error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return nil, nil, fmt.Errorf("join state: bad length-prefixed field")
	}
	return v[w : w+int(n)], v[w+int(n):], nil
}

// markDirty records e for the epoch's write, once per entry. In the
// formats keyed by row, an entry deleted and made again in one epoch is
// two entries with one state key: the newer, marked later, is written.
func (op *joinOp) markDirty(e *joinEntry) {
	if e.dirty {
		return
	}
	e.dirty = true
	op.dirty = append(op.dirty, e)
}

func (op *joinOp) barrier(ep Epoch) error {
	op.barriers++
	if op.barriers < 2 {
		return nil
	}
	op.barriers = 0
	op.cache.freeClosed(op)
	switch op.format {
	case joinStateByKey:
		op.cache.markWritten(op, ep.ID)
		op.writePages()
	case joinStateByPage:
		op.writePages()
	default:
		op.writeEntries()
	}
	clear(op.dirty) // drop the pointers: deleted entries may go
	op.dirty = op.dirty[:0]
	if err := op.pending.writeTo(ep.Batch, op.prefix); err != nil {
		return err
	}
	op.cache.evict(op)
	return op.next.Barrier(ep)
}

// writeEntries is the barrier's write in the formats with a state key per
// entry.
func (op *joinOp) writeEntries() {
	// Entries are keyed by their ids or by their rows: by id, each key
	// comes once per epoch.
	unique := op.format == joinStateByID
	for _, e := range op.dirty {
		e.dirty = false
		op.keyOut = op.appendStateKeySuffix(op.keyOut[:0], e)
		if e.count <= 0 {
			op.pending.write(op.keyOut, nil, true, unique)
			continue
		}
		op.valOut = op.appendStateValue(op.valOut[:0], e)
		op.pending.write(op.keyOut, op.valOut, false, unique)
	}
}
