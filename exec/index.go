package exec

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// Secondary indexes (CREATE INDEX) of a table or materialized view live in
// state tables of the object, numbered from FirstIndexTable. An entry is a
// key only: the indexed columns' values (keyenc, so entries sort by them)
// followed by the row's key in the object's own state table (after
// ViewTablePrefix), whatever the object's MaterializeMode makes of it. The
// materialize operator writes the entries in the same epoch batch as the
// rows, so a Pebble snapshot holds an index consistent with its object.
//
// Readers treat an entry as a hint: they read the row it points to and
// evaluate their whole condition on it. An entry left behind by a row
// replaced without a retraction costs a read, never a wrong row.

// FirstIndexTable is the state table number of an object's first index
// (catalog.Index.Table). Operators number their tables from
// firstOperatorIndex up; viewErrorsIndex is 0xFFFF.
const FirstIndexTable uint16 = 0xF000

// IndexPrefix is the key prefix of the entries of index ix of object id.
func IndexPrefix(id uint32, ix *catalog.Index) []byte { return storage.StatePrefix(id, ix.Table) }

// IndexColumns returns the positions among cols (the object's stored
// columns) of ix's columns; false if one is not there.
func IndexColumns(ix *catalog.Index, cols []types.Column) ([]int, bool) {
	out := make([]int, len(ix.Columns))
	for i, c := range ix.Columns {
		out[i] = -1
		for j, col := range cols {
			if col.Name == c.Name {
				out[i] = j
				break
			}
		}
		if out[i] < 0 {
			return nil, false
		}
	}
	return out, true
}

// AppendIndexValues appends the key encoding of row's indexed columns.
func AppendIndexValues(buf []byte, row types.Row, cols []int) []byte {
	for _, c := range cols {
		buf = keyenc.Append(buf, row[c])
	}
	return buf
}

// indexRowKey returns the row key an entry (without the index prefix)
// points to: what follows its n indexed values.
func indexRowKey(entry []byte, n int) ([]byte, error) {
	rest := entry
	for range n {
		var err error
		if _, rest, err = keyenc.Decode(rest); err != nil {
			return nil, fmt.Errorf("index entry: %w", err)
		}
	}
	return rest, nil
}

// indexWriter keeps one index in step with a materialize operator's
// writes: an entry is set while its row is stored and deleted with it.
type indexWriter struct {
	prefix  []byte
	cols    []int
	pending pendingWrites
	buf     []byte
}

// newIndexWriters returns the writers of d's indexes over its stored
// columns cols. An index naming a column the object no longer has is left
// out (its entries are no longer kept).
func newIndexWriters(d *catalog.Descriptor, cols []types.Column) []*indexWriter {
	var out []*indexWriter
	for i := range d.Indexes {
		ix := &d.Indexes[i]
		pos, ok := IndexColumns(ix, cols)
		if !ok {
			continue
		}
		out = append(out, &indexWriter{prefix: IndexPrefix(d.ID, ix), cols: pos})
	}
	return out
}

// note records that the row stored under rowKey is there (present) or
// gone.
func (w *indexWriter) note(row types.Row, rowKey []byte, present bool) {
	w.buf = append(AppendIndexValues(w.buf[:0], row, w.cols), rowKey...)
	w.pending.write(w.buf, nil, !present, false)
}

// BuildIndex writes into b the entries of index ix for every row object d
// stores in r, after deleting whatever ix's table held. For a unique
// index it stops at the first row whose indexed values (none NULL) another
// row has too, and returns it.
func BuildIndex(r storage.Reader, b *pebble.Batch, d *catalog.Descriptor, ix *catalog.Index) (dup types.Row, err error) {
	prefix := IndexPrefix(d.ID, ix)
	if err := b.DeleteRange(prefix, storage.PrefixEnd(prefix), nil); err != nil {
		return nil, err
	}
	var seen map[string]struct{}
	if ix.Unique {
		seen = map[string]struct{}{}
	}
	err = EachIndexEntry(r, d, ix, func(key []byte, vals int, row types.Row, count uint64) error {
		if seen != nil && vals > 0 {
			v := string(key[len(prefix) : len(prefix)+vals])
			if _, taken := seen[v]; taken || count > 1 {
				dup = row
				return errStopScan
			}
			seen[v] = struct{}{}
		}
		return b.Set(key, nil, nil)
	})
	if err == errStopScan {
		return dup, nil
	}
	return nil, err
}

var errStopScan = fmt.Errorf("stop")

func anyNull(row types.Row, cols []int) bool {
	for _, c := range cols {
		if row[c].IsNull() {
			return true
		}
	}
	return false
}

// IndexRead is a read of a table or view through one of its indexes: the
// entries in a set of key spans.
type IndexRead struct {
	Index *catalog.Index
	// Eq is how many leading index columns the condition fixes with = or
	// IN; Range is set when the next one is bounded by <, <=, >, >= or
	// BETWEEN.
	Eq    int
	Range bool
	id    uint32
	ncols int
	spans [][2][]byte // [lower, upper) full keys
}

// Describe is the EXPLAIN line of the read.
func (ir *IndexRead) Describe(object string) string {
	return fmt.Sprintf("Index Scan using %s on %s", ir.Index.Name, object)
}

// ChooseIndex picks the index of s's object that reads the fewest entries
// for cond: one whose leading columns cond fixes to constants (= or IN,
// ANDed), optionally followed by one it bounds with constants, preferring
// more fixed columns and unique indexes. It reports false when no index
// fits (or s is not a stored table or view).
func ChooseIndex(cond expr.Expr, s *plan.Scan) (*IndexRead, bool) {
	if s.Rows != nil || len(s.Object.Indexes) == 0 || cond == nil || expr.VolatileCall(cond) != "" {
		return nil, false
	}
	if s.Object.Kind != catalog.KindTable && s.Object.Kind != catalog.KindView {
		return nil, false
	}
	conj := plan.Conjuncts(cond)
	var best *IndexRead
	score := func(r *IndexRead) int {
		n := r.Eq * 8
		if r.Range {
			n += 4
		}
		if r.Eq == len(r.Index.Columns) {
			n++ // every column fixed: the narrowest entries
			if r.Index.Unique {
				n++
			}
		}
		return n
	}
	for i := range s.Object.Indexes {
		ix := &s.Object.Indexes[i]
		pos, ok := IndexColumns(ix, s.Cols)
		if !ok {
			continue
		}
		r, ok := indexSpans(conj, s, ix, pos)
		if ok && (best == nil || score(r) > score(best)) {
			best = r
		}
	}
	return best, best != nil
}

// indexSpans builds the spans of index ix (columns pos of s) that conj
// restricts, false if it does not restrict the first column.
func indexSpans(conj []expr.Expr, s *plan.Scan, ix *catalog.Index, pos []int) (*IndexRead, bool) {
	r := &IndexRead{Index: ix, id: s.Object.ID, ncols: len(pos)}
	prefixes := [][]byte{IndexPrefix(s.Object.ID, ix)}
	for _, c := range pos {
		t := s.Cols[c].Type
		if !exactKeyType(t) {
			break
		}
		vals, ok := keyValues(conj, c, t)
		if !ok || len(prefixes)*len(vals) > maxPinnedKeys {
			break
		}
		next := make([][]byte, 0, len(prefixes)*len(vals))
		for _, p := range prefixes {
			for _, v := range vals {
				next = append(next, keyenc.Append(bytes.Clone(p), v))
			}
		}
		prefixes = next
		r.Eq++
	}
	var lo, hi []byte
	var hiIncl bool
	if r.Eq < len(pos) {
		c := pos[r.Eq]
		lo, hi, hiIncl, r.Range = keyBounds(conj, c, s.Cols[c].Type)
	}
	if r.Eq == 0 && !r.Range {
		return nil, false
	}
	slices.SortFunc(prefixes, bytes.Compare)
	prefixes = slices.CompactFunc(prefixes, bytes.Equal)
	for _, p := range prefixes {
		if !r.Range {
			r.spans = append(r.spans, [2][]byte{p, storage.PrefixEnd(p)})
			continue
		}
		// Entries of values >= lo (or all of p), up to those <= hi (past
		// every entry that starts with hi's encoding) or < hi, or up to
		// the NULLs (which sort last and no comparison passes).
		start := append(bytes.Clone(p), lo...)
		end := keyenc.Append(bytes.Clone(p), types.Null)
		if hi != nil {
			end = append(bytes.Clone(p), hi...)
			if hiIncl {
				end = storage.PrefixEnd(end)
			}
		}
		if bytes.Compare(start, end) < 0 {
			r.spans = append(r.spans, [2][]byte{start, end})
		}
	}
	return r, true
}

// keyBounds finds conjuncts bounding column col (of an exact key type t)
// by constants and returns the encoded lower bound (inclusive; nil for
// none) and upper bound (nil for none). A strict lower bound is kept
// inclusive: the caller's condition drops the equal values.
func keyBounds(conj []expr.Expr, col int, t types.Type) (lo, hi []byte, hiIncl, ok bool) {
	if !exactKeyType(t) {
		return nil, nil, false, false
	}
	var loV, hiV *types.Datum
	for _, c := range conj {
		f, isF := c.(*expr.Func)
		if !isF || len(f.Args) != 2 {
			continue
		}
		op := f.Name
		for i := range 2 {
			k, isConst := constant(f.Args[1-i])
			if !isConst || !isColumn(f.Args[i], col, t) || k.D.IsNull() {
				continue
			}
			v, err := expr.CastDatum(k.D, t)
			if err != nil {
				continue
			}
			if back, err := expr.CastDatum(v, k.T); err != nil || types.Compare(back, k.D) != 0 {
				continue
			}
			o := op
			if i == 1 { // constant op column: flip
				o = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
			}
			switch o {
			case ">", ">=":
				if loV == nil || types.Compare(v, *loV) > 0 {
					loV = &v
				}
			case "<", "<=":
				if hiV == nil || types.Compare(v, *hiV) < 0 || types.Compare(v, *hiV) == 0 && o == "<" {
					hiV = &v
					hiIncl = o == "<="
				}
			}
		}
	}
	if loV == nil && hiV == nil {
		return nil, nil, false, false
	}
	if loV != nil {
		lo = keyenc.Append(nil, *loV)
	}
	if hiV != nil {
		hi = keyenc.Append(nil, *hiV)
	}
	return lo, hi, hiIncl, true
}

// RowKeys returns the keys (after ViewTablePrefix) of the rows the read's
// entries in r point to, in index order without repeats.
func (ir *IndexRead) RowKeys(r storage.Reader) ([][]byte, error) {
	prefix := storage.StatePrefix(ir.id, ir.Index.Table)
	var out [][]byte
	seen := map[string]bool{}
	for _, sp := range ir.spans {
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: sp[0], UpperBound: sp[1]})
		if err != nil {
			return nil, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			k, err := indexRowKey(it.Key()[len(prefix):], ir.ncols)
			if err != nil {
				it.Close()
				return nil, err
			}
			if !seen[string(k)] {
				seen[string(k)] = true
				out = append(out, bytes.Clone(k))
			}
		}
		err = it.Error()
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lookupByIndex runs a filter over a scan of a table or view with an
// index that fits the filter (ChooseIndex): the rows its entries point to
// that pass the filter, each as many times as stored.
func lookupByIndex(f *plan.Filter, r storage.Reader) ([]types.Row, bool, error) {
	s, ok := f.Input.(*plan.Scan)
	if !ok {
		return nil, false, nil
	}
	ir, ok := ChooseIndex(f.Cond, s)
	if !ok {
		return nil, false, nil
	}
	keys, err := ir.RowKeys(r)
	if err != nil {
		return nil, true, err
	}
	table := ViewTablePrefix(s.Object.ID)
	full := make([][]byte, len(keys))
	for i, k := range keys {
		full[i] = append(append([]byte(nil), table...), k...)
	}
	out, err := readKeyedRows(r, full, len(s.Cols), f.Cond)
	return out, true, err
}
