package pgwire

import (
	"bufio"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
)

const (
	// writeBufferSize is the size of the socket write buffer: rows are
	// streamed to the client whenever it fills, not only at ReadyForQuery.
	writeBufferSize = 32 << 10
	// maxKeptScratch bounds the encoding buffer kept between messages, so
	// that one huge row does not pin its memory for the connection's life.
	maxKeptScratch = 64 << 10
)

// msgWriter buffers backend messages on their way to the socket. Messages
// are always written whole, so the buffer never holds a partial message.
// The first write error is sticky: later writes are dropped and the
// connection loop ends when it sees it.
type msgWriter struct {
	bw      *bufio.Writer
	scratch []byte
	err     error
}

func newMsgWriter(w io.Writer) *msgWriter {
	return &msgWriter{bw: bufio.NewWriterSize(w, writeBufferSize)}
}

// send encodes and buffers one message.
func (w *msgWriter) send(m pgproto3.BackendMessage) {
	if w.err != nil {
		return
	}
	b, err := m.Encode(w.scratch[:0])
	if err != nil {
		w.err = fmt.Errorf("encoding %T: %w", m, err)
		return
	}
	w.writeRaw(b)
	w.keep(b)
}

// keep retains b as the scratch buffer unless it has grown too large.
func (w *msgWriter) keep(b []byte) {
	if cap(b) <= maxKeptScratch {
		w.scratch = b[:0]
	} else {
		w.scratch = nil
	}
}

// writeRaw buffers already encoded messages.
func (w *msgWriter) writeRaw(b []byte) error {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
	return w.err
}

// flush sends everything buffered to the client.
func (w *msgWriter) flush() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}
