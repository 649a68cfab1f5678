package exec

import (
	"bytes"
	"fmt"

	"streamdb/catalog"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// EachIndexEntry hands put the entry key of index ix (IndexPrefix, the
// indexed values, the row's key) for every row object d stores in r, in
// the order of the rows; vals is the length of the values' encoding, 0
// when one of them is NULL. count is how many copies of the row the
// object holds (more than one only in a table without a primary key).
// The key is reused by the next call.
func EachIndexEntry(r storage.Reader, d *catalog.Descriptor, ix *catalog.Index, put func(key []byte, vals int, row types.Row, count uint64) error) error {
	cols, err := d.Schema()
	if err != nil {
		return err
	}
	pos, ok := IndexColumns(ix, cols)
	if !ok {
		return fmt.Errorf("index %s names a column %s does not have", ix.Name, d.Name)
	}
	prefix := IndexPrefix(d.ID, ix)
	table := ViewTablePrefix(d.ID)
	var key []byte
	return storage.ScanPrefix(r, table, func(k, v []byte) error {
		row, count, err := DecodeViewValue(v, len(cols))
		if err != nil {
			return err
		}
		key = AppendIndexValues(append(key[:0], prefix...), row, pos)
		vals := len(key) - len(prefix)
		if anyNull(row, pos) {
			vals = 0
		}
		key = append(key, k[len(table):]...)
		return put(key, vals, row, count)
	})
}

// FirstDuplicate reads the entries of unique index ix of object d in r
// (built, as EachIndexEntry makes them) in their order and returns a row
// whose indexed values, none NULL, another row has too, or nil. It holds
// one entry at a time: equal values are next to each other. Copies of
// one row of a table without a primary key share an entry: EachIndexEntry's
// count tells them.
func FirstDuplicate(r storage.Reader, d *catalog.Descriptor, ix *catalog.Index) (types.Row, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	prefix := IndexPrefix(d.ID, ix)
	var last []byte
	var dupKey []byte
	err = storage.ScanPrefix(r, prefix, func(k, _ []byte) error {
		entry := k[len(prefix):]
		rowKey, err := indexRowKey(entry, len(ix.Columns))
		if err != nil {
			return err
		}
		vals := entry[:len(entry)-len(rowKey)]
		if hasNull(vals) {
			last = last[:0]
			return nil
		}
		if len(last) > 0 && bytes.Equal(last, vals) {
			dupKey = bytes.Clone(rowKey)
			return errStopScan
		}
		last = append(last[:0], vals...)
		return nil
	})
	if err != errStopScan {
		return nil, err
	}
	var row types.Row
	err = storage.ScanPrefix(r, append(ViewTablePrefix(d.ID), dupKey...), func(k, v []byte) error {
		if len(k) != len(ViewTablePrefix(d.ID))+len(dupKey) {
			return nil
		}
		var err error
		row, _, err = DecodeViewValue(v, len(cols))
		return err
	})
	if err == nil && row == nil {
		err = fmt.Errorf("index %s of %s points to a row it does not hold", ix.Name, d.Name)
	}
	return row, err
}

// hasNull reports whether one of the key-encoded values in vals is NULL.
func hasNull(vals []byte) bool {
	for len(vals) > 0 {
		d, rest, err := keyenc.Decode(vals)
		if err != nil || d.IsNull() {
			return true
		}
		vals = rest
	}
	return false
}
