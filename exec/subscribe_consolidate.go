package exec

import (
	"bytes"
	"sort"

	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// RowDiff is a row whose multiplicity changed by Diff (never 0).
type RowDiff struct {
	Row  types.Row
	Diff int64
	key  []byte
}

// Consolidate sums the changes of an epoch per distinct row, drops rows
// whose changes cancel, and orders the rest: retractions first, then
// insertions, each by the row's encoded value, so that a feed is the same
// for the same changes.
func (c EpochChanges) Consolidate() []RowDiff {
	byKey := map[string]int{}
	var out []RowDiff
	for _, ch := range c.chunks {
		for i, row := range ch.Rows {
			k := keyenc.AppendRowValue(nil, row)
			j, ok := byKey[string(k)]
			if !ok {
				j = len(out)
				byKey[string(k)] = j
				out = append(out, RowDiff{Row: row, key: k})
			}
			out[j].Diff += int64(ch.Signs[i])
		}
	}
	return SortChanges(out)
}

// SortChanges drops zero changes and orders the rest as Consolidate does.
func SortChanges(cs []RowDiff) []RowDiff {
	kept := cs[:0]
	for _, c := range cs {
		if c.Diff != 0 {
			if c.key == nil {
				c.key = keyenc.AppendRowValue(nil, c.Row)
			}
			kept = append(kept, c)
		}
	}
	sort.Slice(kept, func(i, j int) bool {
		if (kept[i].Diff < 0) != (kept[j].Diff < 0) {
			return kept[i].Diff < 0
		}
		return bytes.Compare(kept[i].key, kept[j].key) < 0
	})
	return kept
}

// ViewCounts reads view id's rows with their multiplicities from r,
// keyed by the row's encoded value: a keyed view stores rows by its key,
// so two states of it compare by value.
func ViewCounts(r storage.Reader, id uint32, ncols int) (map[string]RowDiff, error) {
	out := map[string]RowDiff{}
	err := storage.ScanPrefix(r, ViewTablePrefix(id), func(_, v []byte) error {
		row, n, err := DecodeViewValue(v, ncols)
		if err != nil {
			return err
		}
		k := keyenc.AppendRowValue(nil, row)
		c := out[string(k)]
		c.Row, c.key, c.Diff = row, k, c.Diff+int64(n)
		out[string(k)] = c
		return nil
	})
	return out, err
}

// DiffCounts returns the changes that turn state a into state b.
func DiffCounts(a, b map[string]RowDiff) []RowDiff {
	var out []RowDiff
	for k, cb := range b {
		if d := cb.Diff - a[k].Diff; d != 0 {
			out = append(out, RowDiff{Row: cb.Row, Diff: d, key: cb.key})
		}
	}
	for k, ca := range a {
		if _, ok := b[k]; !ok {
			out = append(out, RowDiff{Row: ca.Row, Diff: -ca.Diff, key: ca.key})
		}
	}
	return SortChanges(out)
}
