package exec

import (
	"encoding/binary"
	"fmt"

	"streamdb/storage"
)

// Join state by key (joinStateByKey). A page's state key starts with its
// side, the vnode of its join key (catalog.DataflowJoinVNodes on: see
// joinOp.vnodes) and the join key, so one join key's rows on one side are
// one key range, and so are one side's rows of a range of vnodes:
// a join that keeps only some keys in memory reads a missing key's rows
// with one scan. Within a key, rows are paged as in join_pages.go: on an
// append-only (packed) side the rows a key gathers share pages of up to
// joinPageBytes, the newest of which (the bucket's tail) takes new rows,
// so a hot key costs one Pebble key per few KiB of rows; on other sides
// each row has a page of its own.
//
// Page ids only need to be unique within a bucket: a bucket read from
// Pebble raises nextID past its pages' ids, and a bucket that is not read
// (missRule says Pebble cannot hold it) has no pages there.

// appendBucketPrefix appends the key range of side's rows with join key
// jk, after the operator's prefix: side, the vnode of jk among vnodes
// (none when vnodes is 0), len(jk), jk. The vnode is that of the join key
// alone, so a key's rows on both sides fall in one vnode.
func appendBucketPrefix(k []byte, side byte, vnodes int, jk string) []byte {
	k = append(k, side)
	if vnodes > 0 {
		k = storage.AppendVNode(k, storage.VNodeOf(jk, vnodes))
	}
	k = binary.AppendUvarint(k, uint64(len(jk)))
	return append(k, jk...)
}

// appendKeyedPageKey appends p's state key after the operator's prefix,
// its join key's vnode among vnodes in it (appendBucketPrefix).
func appendKeyedPageKey(k []byte, vnodes int, p *joinPage) []byte {
	return binary.BigEndian.AppendUint64(appendBucketPrefix(k, p.side, vnodes, p.key), p.id)
}

// appendKeyedEntry appends e as a keyed page stores it:
// count|matches|len(row)|row (side and join key are in the page's key).
func appendKeyedEntry(v []byte, e *joinEntry) []byte {
	v = binary.AppendVarint(v, e.count)
	v = binary.AppendVarint(v, e.matches)
	v = binary.AppendUvarint(v, uint64(len(e.rowKey)))
	return append(v, e.rowKey...)
}

// keyedPageFor returns the page a new entry e goes to, marked for this
// barrier's write: its bucket's tail on a packed side while it has room,
// else a new page.
func (op *joinOp) keyedPageFor(e *joinEntry) *joinPage {
	b := op.state[e.side][e.key]
	var p *joinPage
	if b != nil && op.packed[e.side] {
		p = b.tail
	}
	if p == nil || p.bytes >= joinPageBytes {
		p = &joinPage{id: op.nextID, side: e.side, key: e.key}
		op.nextID++
		if b != nil && op.packed[e.side] {
			b.tail = p
		}
	}
	op.markPageDirty(p)
	return p
}

// restoreKeyedPage puts the entries of one stored page (key after the
// operator's prefix, value) into their bucket, and returns it.
func (op *joinOp) restoreKeyedPage(k, v []byte) (*joinBucket, error) {
	if len(k) < 1 || k[0] > 1 {
		return nil, fmt.Errorf("join state: bad page key")
	}
	side := k[0]
	after := 1 + vnodeSkip(op.vnodes)
	if len(k) < after {
		return nil, fmt.Errorf("join state: bad page key")
	}
	jk, rest, err := readLenPrefixed(k[after:])
	if err != nil {
		return nil, err
	}
	if len(rest) != 8 {
		return nil, fmt.Errorf("join state: bad page key")
	}
	b := op.bucket(side, jk)
	p := &joinPage{id: binary.BigEndian.Uint64(rest), side: side, key: b.key}
	op.nextID = max(op.nextID, p.id+1)
	for len(v) > 0 {
		e := &joinEntry{side: side, key: b.key, page: p}
		if v, err = readVarint(v, &e.count); err != nil {
			return nil, err
		}
		if v, err = readVarint(v, &e.matches); err != nil {
			return nil, err
		}
		var row []byte
		if row, v, err = readLenPrefixed(v); err != nil {
			return nil, err
		}
		e.rowKey = string(row)
		b.put(e, op.listed(side))
		p.entries = append(p.entries, e)
		p.bytes += entryBytes(e)
		if err := op.cache.restored(op, e); err != nil {
			return nil, err
		}
	}
	if op.packed[side] {
		b.tail = p // pages come in id order: the newest takes new rows
	}
	return b, nil
}

// loadBucket reads side's rows with join key jk from Pebble into the
// cache, and returns their bucket (nil when Pebble holds none).
func (op *joinOp) loadBucket(side byte, jk []byte) (*joinBucket, error) {
	pfx := appendBucketPrefix(append([]byte(nil), op.prefix...), side, op.vnodes, string(jk))
	var b *joinBucket
	err := storage.ScanPrefix(op.cache.store, pfx, func(k, v []byte) error {
		var err error
		b, err = op.restoreKeyedPage(k[len(op.prefix):], v)
		return err
	})
	op.cache.reads++
	return b, err
}

// probe returns side's bucket for jk, read from Pebble if the cache may
// have dropped it; nil when side holds no row with that key.
func (op *joinOp) probe(side byte, jk []byte) (*joinBucket, error) {
	b := op.state[side][string(jk)]
	if b != nil {
		op.cache.miss[side].hit()
	}
	if b != nil || !op.cache.lazy || !op.cache.miss[side].mustRead(string(jk)) {
		return b, nil
	}
	return op.loadBucket(side, jk)
}

// lookup returns side's bucket for jk as probe does, made if there is none.
func (op *joinOp) lookup(side byte, jk []byte) (*joinBucket, error) {
	b, err := op.probe(side, jk)
	if b == nil && err == nil {
		b = op.bucket(side, jk)
	}
	return b, err
}
