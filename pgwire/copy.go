package pgwire

import (
	"io"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// CopyConn is implemented by the RowWriter that Prepared.Execute receives:
// a COPY statement uses it to switch the connection into copy-in or
// copy-out mode, once it has checked everything it can before data flows
// (the target exists, the privileges, the options). Such a statement has
// no result columns and writes no rows.
type CopyConn interface {
	// CopyIn sends CopyInResponse for columns values per row (binary: the
	// whole COPY is in binary format) and returns the client's data: the
	// bytes of its CopyData messages, then io.EOF at CopyDone. A CopyFail
	// ends the data with an error (57014). The reader must be used from
	// the goroutine that runs Execute.
	CopyIn(binary bool, columns int) io.Reader
	// CopyOut sends CopyOutResponse; each Write then sends one CopyData
	// message. CopyDone follows when Execute returns without error.
	CopyOut(binary bool, columns int) io.Writer
}

// DecodeBinary converts one value in PostgreSQL's binary format (a binary
// COPY's field) to a datum of type t.
func DecodeBinary(b []byte, t types.Type) (types.Datum, error) { return decodeBinary(b, t) }

// AppendBinary appends the binary format of the non-NULL datum d of type t.
func AppendBinary(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	return appendBinary(dst, d, t)
}

func copyFormats(binary bool, columns int) (int8, []uint16) {
	f := uint16(formatText)
	if binary {
		f = uint16(formatBinary)
	}
	codes := make([]uint16, columns)
	for i := range codes {
		codes[i] = f
	}
	return int8(f), codes
}

func (s *rowSink) CopyIn(binary bool, columns int) io.Reader {
	overall, codes := copyFormats(binary, columns)
	s.c.w.send(&pgproto3.CopyInResponse{OverallFormat: byte(overall), ColumnFormatCodes: codes})
	s.c.w.flush()
	return &copyInReader{s: s}
}

func (s *rowSink) CopyOut(binary bool, columns int) io.Writer {
	overall, codes := copyFormats(binary, columns)
	s.c.w.send(&pgproto3.CopyOutResponse{OverallFormat: byte(overall), ColumnFormatCodes: codes})
	s.copyingOut = true
	return copyOutWriter{s: s}
}

// endCopyOut sends CopyDone after a successful COPY TO.
func (s *rowSink) endCopyOut() {
	if s.copyingOut {
		s.c.w.send(&pgproto3.CopyDone{})
	}
}

// copyInReader reads the CopyData messages of a COPY FROM STDIN. It only
// receives the next message once the previous one's bytes are consumed,
// since the Backend reuses its buffer.
type copyInReader struct {
	s    *rowSink
	buf  []byte
	done bool
	err  error
}

func (r *copyInReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.done {
			return 0, io.EOF
		}
		if r.err != nil {
			return 0, r.err
		}
		r.err = r.receive()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// receive reads the next message of the copy-in sub-protocol.
func (r *copyInReader) receive() error {
	c := r.s.c
	if err := r.s.ctx.Err(); err != nil {
		return copyCanceled(r.s)
	}
	msg, err := c.be.Receive()
	if err != nil {
		// The connection is broken: end it once the statement returns.
		c.quit = true
		return sqlerr.New(sqlerr.ConnectionFailure, "connection lost during COPY from stdin: %v", err)
	}
	switch m := msg.(type) {
	case *pgproto3.CopyData:
		r.buf = m.Data
	case *pgproto3.CopyDone:
		r.done = true
	case *pgproto3.CopyFail:
		return sqlerr.New(sqlerr.QueryCanceled, "COPY from stdin failed: %s", m.Message)
	case *pgproto3.Flush, *pgproto3.Sync:
		// Ignored in copy-in mode, as PostgreSQL does.
	case *pgproto3.Terminate:
		c.quit = true
		return sqlerr.New(sqlerr.ConnectionFailure, "the client ended the connection during COPY from stdin")
	default:
		return sqlerr.New(sqlerr.ProtocolViolation, "unexpected message type %q during COPY from stdin", msgType(msg))
	}
	return nil
}

// context_cause is the error a cancelled COPY reports.
func copyCanceled(s *rowSink) error { return runError(s.ctx, s.ctx.Err()) }

// msgType is the protocol's one-letter name of a frontend message.
func msgType(m pgproto3.FrontendMessage) string {
	b, err := m.Encode(nil)
	if err != nil || len(b) == 0 {
		return "?"
	}
	return string(b[:1])
}

// copyOutWriter sends each Write as one CopyData message.
type copyOutWriter struct{ s *rowSink }

func (w copyOutWriter) Write(p []byte) (int, error) {
	if err := w.s.ctx.Err(); err != nil {
		return 0, copyCanceled(w.s)
	}
	w.s.c.w.send(&pgproto3.CopyData{Data: p})
	if w.s.c.w.err != nil {
		return 0, w.s.c.w.err
	}
	return len(p), nil
}
