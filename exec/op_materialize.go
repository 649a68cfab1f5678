package exec

import (
	"encoding/binary"
	"fmt"

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
)

// materializeOp writes a view's changes into its state table. Rows are
// stored as a value of (uvarint multiplicity, key-encoded row), so readers
// decode every mode alike.
type materializeOp struct {
	mode    MaterializeMode
	keyCols []int
	prefix  []byte // the view's table
	metaKey []byte // AppendOnly: next row id

	nextRowID uint64
	pending   pendingWrites    // the epoch's writes, newest per key
	counts    map[string]int64 // Counted: multiplicity of every row
	keyBuf    []byte           // scratch for Push
}

func newMaterializeOp(mode MaterializeMode, keyCols []int, prefix, metaKey []byte, store *storage.Store) (*materializeOp, error) {
	op := &materializeOp{mode: mode, keyCols: keyCols, prefix: prefix, metaKey: metaKey}
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
		op.counts = map[string]int64{}
		err := storage.ScanPrefix(store.DB(), prefix, func(k, v []byte) error {
			n, _ := binary.Uvarint(v)
			op.counts[string(k[len(prefix):])] = int64(n)
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
	for i, row := range c.Rows {
		sign := c.Signs[i]
		kb := op.keyBuf[:0]
		switch op.mode {
		case Keyed:
			for _, j := range op.keyCols {
				kb = keyenc.Append(kb, row[j])
			}
			if sign > 0 {
				op.pending.set(kb, row, 1)
			} else {
				op.pending.del(kb)
			}
		case AppendOnly:
			if sign < 0 {
				return fmt.Errorf("internal error: retraction reached an append-only view")
			}
			kb = binary.BigEndian.AppendUint64(kb, op.nextRowID)
			op.nextRowID++
			op.pending.setNew(kb, row, 1)
		case Counted:
			kb = keyenc.AppendRowValue(kb, row)
			n := op.counts[string(kb)] + int64(sign)
			if n <= 0 {
				delete(op.counts, string(kb))
				op.pending.del(kb)
			} else {
				op.counts[string(kb)] = n
				op.pending.set(kb, row, uint64(n))
			}
		}
		op.keyBuf = kb
	}
	return nil
}

func (op *materializeOp) Barrier(e Epoch) error {
	if err := op.pending.writeTo(e.Batch, op.prefix); err != nil {
		return err
	}
	if op.mode == AppendOnly {
		return e.Batch.Set(op.metaKey, binary.BigEndian.AppendUint64(op.keyBuf[:0], op.nextRowID), nil)
	}
	return nil
}
