package sql

import (
	"bytes"
	"encoding/binary"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/metrics"
	"streamdb/sqlerr"
)

// The rows a block inserts into a stream wait for its COMMIT as encoded
// messages (streamWrite.msgs). Past transaction_spill_memory they move
// to the block's scratch store with its tables' changes, in order:
//
//	'S' stream n -> message (the stream's n-th row of the block)
//
// and the COMMIT publishes them from there, then those still in memory,
// one at a time through the transaction stream (meta.Tables.PublishTxn),
// as any write of more rows than one atomic batch takes.

// streamSpill is the part of a block's rows for one stream on disk.
type streamSpill struct {
	s  *blockSpill
	id uint32
	n  uint64 // rows spilled
}

func spillStreamKey(id uint32, n uint64) []byte {
	k := binary.BigEndian.AppendUint32([]byte{'S'}, id)
	return binary.BigEndian.AppendUint64(k, n)
}

// streamMsgBytes estimates the memory one message of a block takes.
func streamMsgBytes(m []byte) int64 { return int64(24 + len(m)) }

// spillStream moves the block's rows for w still in memory to the spill.
func (s *session) spillStream(w *streamWrite) error {
	if len(w.msgs) == 0 {
		return nil
	}
	if w.spill == nil {
		db, err := s.tx.openSpill(s)
		if err != nil {
			return err
		}
		w.spill = &streamSpill{s: db, id: w.d.ID}
	}
	sp := w.spill
	err := sp.s.db.Write(func(set func(k, v []byte), _ func(k []byte)) {
		for _, m := range w.msgs {
			set(spillStreamKey(sp.id, sp.n), m)
			sp.n++
		}
	})
	if err != nil {
		return err
	}
	metrics.TransactionSpills.WithLabelValues("stream").Inc()
	clear(w.msgs)
	w.msgs, w.memBytes = nil, 0
	return nil
}

// rowCount is the number of rows the block inserted into w's stream.
func (w *streamWrite) rowCount() int {
	n := len(w.msgs)
	if w.spill != nil {
		n += int(w.spill.n)
	}
	return n
}

// keepRows undoes the block's rows for w's stream past the first keep.
func (w *streamWrite) keepRows(keep int) error {
	spilled := 0
	if w.spill != nil {
		spilled = int(w.spill.n)
	}
	if keep >= spilled {
		w.msgs = w.msgs[:keep-spilled]
	} else {
		sp := w.spill
		if err := sp.s.db.DeleteRange(spillStreamKey(sp.id, uint64(keep)), spillStreamKey(sp.id+1, 0)); err != nil {
			return err
		}
		sp.n = uint64(keep)
		w.msgs = nil
	}
	w.memBytes = 0
	for _, m := range w.msgs {
		w.memBytes += streamMsgBytes(m)
	}
	return nil
}

// each hands emit the stream's spilled messages in order, then
// those in memory.
func (w *streamWrite) each(emit func([]byte) error) error {
	if sp := w.spill; sp != nil {
		err := sp.s.db.Scan(spillStreamKey(sp.id, 0), spillStreamKey(sp.id+1, 0), false, func(_, v []byte) (bool, error) {
			err := emit(bytes.Clone(v))
			return err == nil, err
		})
		if err != nil {
			return err
		}
	}
	for _, m := range w.msgs {
		if err := emit(m); err != nil {
			return err
		}
	}
	return nil
}

// spilledStreamPart is the commit's part for a stream whose rows
// spilled: its messages are read from the spill as they are published.
func spilledStreamPart(w *streamWrite, limit int) meta.TxnPart {
	return meta.TxnPart{D: w.d, Source: func(emit func([]byte) error) error {
		return w.each(func(m []byte) error {
			if len(m) > limit {
				return streamRowTooLarge(w.d, len(m), limit)
			}
			return emit(m)
		})
	}}
}

// streamRowTooLarge is the error of a row for stream d of size bytes,
// over the limit for one message.
func streamRowTooLarge(d *catalog.Descriptor, size, limit int) error {
	return sqlerr.New(sqlerr.ProgramLimitExceeded, "a row for stream %q is %d bytes, over the limit of %d bytes for one message", d.Name, size, limit)
}
