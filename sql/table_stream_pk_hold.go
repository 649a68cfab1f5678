package sql

import (
	"bytes"
	"encoding/binary"

	"streamdb/exec"
	"streamdb/types"
)

// changeHold keeps the rows a streaming UPDATE publishes only after all
// its deletions (table_stream_pk.go), in the order they came: the newest
// in memory, up to changeHoldMemRows, and past that in a scratch store on
// disk (a private Pebble database without a WAL, removed by close), so
// the statement's memory does not grow with the rows it holds back.
type changeHold struct {
	ncols int
	open  func() (scratchStore, error)
	store scratchStore // nil until the memory is full once
	mem   []types.Row
	seq   uint64 // rows written to store
}

// changeHoldMemRows is the most held rows kept in memory at a time.
const changeHoldMemRows = changeBatchRows

func newChangeHold(ncols int, open func() (scratchStore, error)) *changeHold {
	return &changeHold{ncols: ncols, open: open}
}

// add holds row.
func (h *changeHold) add(row types.Row) error {
	h.mem = append(h.mem, row)
	if len(h.mem) < changeHoldMemRows {
		return nil
	}
	return h.spill()
}

// spill writes the rows in memory to the store, after those there.
func (h *changeHold) spill() error {
	if h.store == nil {
		st, err := h.open()
		if err != nil {
			return err
		}
		h.store = st
	}
	err := h.store.Write(func(set func(k, v []byte), _ func(k []byte)) {
		for _, row := range h.mem {
			set(binary.BigEndian.AppendUint64(nil, h.seq), exec.EncodeViewValue(row, 1))
			h.seq++
		}
	})
	clear(h.mem)
	h.mem = h.mem[:0]
	return err
}

// each hands the held rows, in the order they were added, to fn as
// insertions, at most n at a time (in a slice fn may not keep).
func (h *changeHold) each(n int, fn func([]exec.Change) error) error {
	batch := make([]exec.Change, 0, n)
	emit := func(row types.Row) error {
		batch = append(batch, exec.Change{Row: row, Sign: exec.Insert})
		if len(batch) < n {
			return nil
		}
		err := fn(batch)
		clear(batch)
		batch = batch[:0]
		return err
	}
	if h.store != nil {
		err := h.store.Scan(nil, nil, false, func(_, v []byte) (bool, error) {
			row, _, err := exec.DecodeViewValue(bytes.Clone(v), h.ncols)
			if err != nil {
				return false, err
			}
			return true, emit(row)
		})
		if err != nil {
			return err
		}
	}
	for _, row := range h.mem {
		if err := emit(row); err != nil {
			return err
		}
	}
	if len(batch) > 0 {
		return fn(batch)
	}
	return nil
}

func (h *changeHold) close() {
	if h.store != nil {
		h.store.Close()
	}
}
