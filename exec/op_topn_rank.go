package exec

import (
	"strings"

	"streamdb/plan"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// rankEntry is one distinct input row of a TopN partition with its
// multiplicity. Entries of a partition are kept sorted by (sort key
// values, enc): the sort keys in the query's order, ties broken by the
// row's value encoding so that the ranking is deterministic.
type rankEntry struct {
	row   types.Row
	keys  []types.Datum // the ORDER BY values
	enc   string        // keyenc.AppendRowValue(row): identity and tie break
	count int64         // multiplicity; may dip below 1 only transiently
}

// newRankEntry evaluates the sort keys of row.
func newRankEntry(order []plan.SortKey, row types.Row) (*rankEntry, error) {
	// The row is copied: chunk rows share slabs, and a kept row would pin
	// its whole slab.
	e := &rankEntry{row: append(types.Row(nil), row...), keys: make([]types.Datum, len(order)), enc: string(keyenc.AppendRowValue(nil, row))}
	for i, k := range order {
		v, err := k.Expr.Eval(row)
		if err != nil {
			return nil, err
		}
		e.keys[i] = v
	}
	return e, nil
}

// compareKeys orders sort key values as PostgreSQL's ORDER BY does: NULL
// is larger than every value, so last ascending and first descending.
// (NULLS FIRST / LAST reach the plan as an extra "x IS NULL" key placed
// before x by the front layer.)
func compareKeys(order []plan.SortKey, a, b []types.Datum) int {
	for i, k := range order {
		c := types.Compare(a[i], b[i])
		if c == 0 {
			continue
		}
		if k.Desc {
			return -c
		}
		return c
	}
	return 0
}

func compareEntries(order []plan.SortKey, a, b *rankEntry) int {
	if c := compareKeys(order, a.keys, b.keys); c != 0 {
		return c
	}
	return strings.Compare(a.enc, b.enc)
}

// rankedRows returns the output rows of one partition: the rows ranked
// Offset+1 .. Offset+Count (row numbers; Func ""), and under WithTies the
// rows after those that tie with the last of them, or whose rank is at
// most Count (ranking functions, which append the rank to each row). It
// walks only as far as the bound.
func rankedRows(t *plan.TopN, l *rankList) []types.Row {
	var out []types.Row
	var pos, rank, dense int64
	var prev, last []types.Datum // last: the keys of row Offset+Count
	l.each(func(e *rankEntry) bool {
		for c := int64(0); c < e.count; c++ {
			pos++
			if prev == nil || compareKeys(t.Order, prev, e.keys) != 0 {
				rank, dense = pos, dense+1
			}
			prev = e.keys
			switch t.Func {
			case "":
				if pos <= t.Offset {
					continue
				}
				if t.Count >= 0 && pos > t.Offset+t.Count &&
					(last == nil || compareKeys(t.Order, last, e.keys) != 0) {
					return false
				}
				if t.WithTies && pos == t.Offset+t.Count {
					last = e.keys
				}
				out = append(out, e.row)
				continue
			case plan.RowNumber:
				rank = pos
			case plan.DenseRank:
				rank = dense
			}
			// Ranks never decrease along the walk.
			if t.Count >= 0 && rank > t.Count {
				return false
			}
			r := make(types.Row, 0, len(e.row)+1)
			out = append(out, append(append(r, e.row...), types.NewInt(rank)))
		}
		return true
	})
	return out
}

// keptEntries returns how many leading entries of l hold rows within the
// bound of t (t.Count >= 0): the entries after them rank past it. Under
// WithTies an entry past the bound is kept while it ties with the one
// before it, which is kept and so ties with row Offset+Count (Count > 0).
func keptEntries(t *plan.TopN, l *rankList) int {
	var pos, rank, dense int64
	var prev []types.Datum
	kept := 0
	l.each(func(e *rankEntry) bool {
		if e.count <= 0 {
			kept++
			return true
		}
		first := pos + 1 // the entry's first copy
		pos += e.count
		tied := prev != nil && compareKeys(t.Order, prev, e.keys) == 0
		if !tied {
			rank, dense = first, dense+1
		}
		prev = e.keys
		r := rank
		switch t.Func {
		case "", plan.RowNumber:
			r = first - t.Offset
		case plan.DenseRank:
			r = dense
		}
		if r > t.Count && !(t.WithTies && t.Count > 0 && tied) {
			return false
		}
		kept++
		return true
	})
	return kept
}

// partitionKey is the encoding of a row's PARTITION BY values, each by
// appendKey (keyAppender).
func partitionKey(t *plan.TopN, row types.Row, appendKey func([]byte, types.Datum) []byte) (string, error) {
	var kb []byte
	for _, p := range t.PartitionBy {
		v, err := p.Eval(row)
		if err != nil {
			return "", err
		}
		kb = appendKey(kb, v)
	}
	return string(kb), nil
}
