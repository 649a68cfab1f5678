package exec

import (
	"sort"

	"streamdb/plan"
)

// rankListBlock is the largest block of a rankList; a full block splits in
// two. A variable so that tests can exercise splits with few rows.
var rankListBlock = 512

// rankList is a partition's entries in rank order, kept as a list of
// sorted blocks so that an insert or removal moves at most one block's
// entries (a plain sorted slice would move half the partition: too slow
// for large partitions under retractions). Invariants: blocks are
// non-empty, each is sorted, and every entry of a block sorts before every
// entry of the next.
type rankList struct {
	blocks [][]*rankEntry
	n      int // entries
}

// Len is the number of entries.
func (l *rankList) Len() int { return l.n }

// each calls fn on the entries in rank order until it returns false.
func (l *rankList) each(fn func(e *rankEntry) bool) {
	for _, b := range l.blocks {
		for _, e := range b {
			if !fn(e) {
				return
			}
		}
	}
}

// locate returns the block that holds e's position (the first block whose
// last entry does not sort before e; the last block if none) and the
// index within it.
func (l *rankList) locate(order []plan.SortKey, e *rankEntry) (int, int) {
	if len(l.blocks) == 0 {
		return 0, 0
	}
	bi := sort.Search(len(l.blocks), func(i int) bool {
		b := l.blocks[i]
		return compareEntries(order, b[len(b)-1], e) >= 0
	})
	if bi == len(l.blocks) {
		bi--
	}
	b := l.blocks[bi]
	return bi, sort.Search(len(b), func(i int) bool { return compareEntries(order, b[i], e) >= 0 })
}

// add changes the multiplicity of e's row by n, inserting or removing its
// entry. It returns the row's entry (count 0 when the row is gone).
func (l *rankList) add(order []plan.SortKey, e *rankEntry, n int64) *rankEntry {
	bi, i := l.locate(order, e)
	if len(l.blocks) > 0 && i < len(l.blocks[bi]) && l.blocks[bi][i].enc == e.enc {
		cur := l.blocks[bi][i]
		cur.count += n
		if cur.count == 0 {
			l.removeAt(bi, i)
		}
		return cur
	}
	e.count = n
	if n == 0 {
		return e
	}
	l.n++
	if len(l.blocks) == 0 {
		l.blocks = [][]*rankEntry{{e}}
		return e
	}
	b := append(l.blocks[bi], nil)
	copy(b[i+1:], b[i:])
	b[i] = e
	l.blocks[bi] = b
	if len(b) > rankListBlock {
		half := len(b) / 2
		right := append([]*rankEntry(nil), b[half:]...)
		clear(b[half:])
		l.blocks[bi] = b[:half]
		l.blocks = append(l.blocks, nil)
		copy(l.blocks[bi+2:], l.blocks[bi+1:])
		l.blocks[bi+1] = right
	}
	return e
}

func (l *rankList) removeAt(bi, i int) {
	b := l.blocks[bi]
	copy(b[i:], b[i+1:])
	b[len(b)-1] = nil
	b = b[:len(b)-1]
	l.n--
	if len(b) == 0 {
		l.blocks = append(l.blocks[:bi], l.blocks[bi+1:]...)
		return
	}
	l.blocks[bi] = b
}

// truncate keeps the first keep entries and returns the others.
func (l *rankList) truncate(keep int) []*rankEntry {
	var dropped []*rankEntry
	seen := 0
	for bi, b := range l.blocks {
		if seen+len(b) <= keep {
			seen += len(b)
			continue
		}
		cut := keep - seen
		dropped = append(dropped, b[cut:]...)
		for _, rest := range l.blocks[bi+1:] {
			dropped = append(dropped, rest...)
		}
		clear(l.blocks[bi+1:])
		if cut == 0 {
			l.blocks = l.blocks[:bi]
		} else {
			clear(b[cut:])
			l.blocks[bi] = b[:cut]
			l.blocks = l.blocks[:bi+1]
		}
		break
	}
	l.n -= len(dropped)
	return dropped
}

// rankListOf makes a list of entries already in rank order.
func rankListOf(entries []*rankEntry) *rankList {
	l := &rankList{n: len(entries)}
	for len(entries) > 0 {
		k := min(len(entries), rankListBlock)
		l.blocks = append(l.blocks, entries[:k:k])
		entries = entries[k:]
	}
	return l
}
