package pgwire

import (
	"context"

	"streamdb/sqlerr"
	"streamdb/types"
)

// rowSink is the RowWriter handed to Prepared.Execute. The engine reuses
// its row slice, so each row is encoded into a DataRow at once. The first
// limit rows go straight to the client (all of them if limit is 0); the
// rest are kept, encoded, in held for a suspended portal.
type rowSink struct {
	c       *conn
	ctx     context.Context
	cols    []types.Column
	formats []int16
	limit   int64
	sent    int64
	held    rowBuffer
	// copyingOut: the statement started COPY TO (CopyOut).
	copyingOut bool
}

func (s *rowSink) WriteRow(row types.Row) error {
	select {
	case <-s.ctx.Done():
		return context.Cause(s.ctx)
	default:
	}
	if s.cols == nil {
		return sqlerr.New(sqlerr.InternalError, "statement produced rows but declared no result columns")
	}
	if s.limit > 0 && s.sent >= s.limit {
		return s.held.add(row, s.cols, s.formats)
	}
	w := s.c.w
	b, err := appendDataRow(w.scratch[:0], row, s.cols, s.formats)
	if err == nil {
		err = w.writeRaw(b)
		s.sent++
	}
	w.keep(b)
	return err
}

// rowBuffer holds encoded DataRow messages of a suspended portal.
type rowBuffer struct {
	data []byte
	ends []int // ends[i] is the end offset of row i in data
	next int   // index of the first row not yet sent
}

func (b *rowBuffer) add(row types.Row, cols []types.Column, formats []int16) error {
	data, err := appendDataRow(b.data, row, cols, formats)
	if err != nil {
		return err
	}
	b.data = data
	b.ends = append(b.ends, len(data))
	return nil
}

func (b *rowBuffer) remaining() int { return len(b.ends) - b.next }

// send writes up to max rows (all if max is 0) to w.
func (b *rowBuffer) send(w *msgWriter, max int64) {
	n := b.remaining()
	if n == 0 {
		return
	}
	if max > 0 && max < int64(n) {
		n = int(max)
	}
	start := 0
	if b.next > 0 {
		start = b.ends[b.next-1]
	}
	b.next += n
	w.writeRaw(b.data[start:b.ends[b.next-1]])
	if b.remaining() == 0 {
		*b = rowBuffer{} // release the memory
	}
}
