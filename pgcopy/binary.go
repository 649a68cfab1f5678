package pgcopy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"

	"streamdb/sqlerr"
)

// COPY's binary format: a signature, flags and a header extension, then
// one tuple per row (a field count, then each field as a length, -1 for
// NULL, and its value in the type's binary format), then a field count of
// -1. This is what pgx's CopyFrom sends.

var copyBinarySignature = []byte("PGCOPY\n\xff\r\n\x00")

// BinaryReader reads the tuples of binary COPY FROM data.
type BinaryReader struct {
	br *bufio.Reader
	// line counts tuples (1-based), for error messages.
	line    int
	started bool
	fields  [][]byte
	// buf holds the current tuple's values, back to back; ends are
	// their end offsets in buf (-1 for NULL). buf is never nil, so an
	// empty value is an empty slice, not NULL.
	buf  []byte
	ends []int
	// word holds a field count or length as it is read (a field, so that
	// reading one allocates nothing).
	word [4]byte
}

// NewBinaryReader reads binary COPY data from r.
func NewBinaryReader(r io.Reader) *BinaryReader {
	return &BinaryReader{br: bufio.NewReaderSize(r, 64<<10), buf: make([]byte, 0, 4<<10)}
}

// Line is the number of the last tuple read (1-based), for error
// messages.
func (r *BinaryReader) Line() int { return r.line }

func badBinaryCopy(format string, args ...any) error {
	return sqlerr.New(sqlerr.BadCopyFileFormat, format, args...)
}

// readFull reads exactly len(p) bytes; the data ending first is bad COPY
// data.
func (r *BinaryReader) readFull(p []byte) error {
	if _, err := io.ReadFull(r.br, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return badBinaryCopy("unexpected EOF in COPY data")
		}
		return err
	}
	return nil
}

func (r *BinaryReader) header() error {
	sig := make([]byte, len(copyBinarySignature)+8)
	if err := r.readFull(sig); err != nil {
		return badBinaryCopy("COPY file signature not recognized")
	}
	if !bytes.Equal(sig[:len(copyBinarySignature)], copyBinarySignature) {
		return badBinaryCopy("COPY file signature not recognized")
	}
	flags := binary.BigEndian.Uint32(sig[len(copyBinarySignature):])
	if flags&(1<<16) != 0 {
		return badBinaryCopy("invalid COPY file header (WITH OIDS)")
	}
	if flags&0xfffe0000 != 0 {
		return badBinaryCopy("unrecognized critical flags in COPY file header")
	}
	ext := binary.BigEndian.Uint32(sig[len(copyBinarySignature)+4:])
	if _, err := r.br.Discard(int(ext)); err != nil {
		return badBinaryCopy("invalid COPY file header (wrong length)")
	}
	return nil
}

// Next reads the next tuple's fields (nil for NULL); ok is false after the
// trailer. The fields are valid until the next call.
func (r *BinaryReader) Next(ncols int) (fields [][]byte, ok bool, err error) {
	if !r.started {
		r.started = true
		if err := r.header(); err != nil {
			return nil, false, err
		}
	}
	r.line++
	if _, err := io.ReadFull(r.br, r.word[:2]); err != nil {
		if errors.Is(err, io.EOF) {
			// PostgreSQL accepts data that ends without the trailer.
			return nil, false, nil
		}
		return nil, false, badBinaryCopy("unexpected EOF in COPY data")
	}
	count := int16(binary.BigEndian.Uint16(r.word[:2]))
	if count == -1 {
		return nil, false, nil
	}
	if int(count) != ncols {
		return nil, false, badBinaryCopy("row field count is %d, expected %d", count, ncols)
	}
	r.buf, r.ends = r.buf[:0], r.ends[:0]
	for i := 0; i < ncols; i++ {
		if err := r.readFull(r.word[:]); err != nil {
			return nil, false, err
		}
		size := int32(binary.BigEndian.Uint32(r.word[:]))
		switch {
		case size == -1:
			r.ends = append(r.ends, -1)
			continue
		case size < -1:
			return nil, false, badBinaryCopy("invalid field size")
		}
		if err := r.readValue(int(size)); err != nil {
			return nil, false, err
		}
		r.ends = append(r.ends, len(r.buf))
	}
	// buf has stopped moving: the fields can point into it.
	r.fields = r.fields[:0]
	start := 0
	for _, end := range r.ends {
		if end < 0 {
			r.fields = append(r.fields, nil)
			continue
		}
		r.fields = append(r.fields, r.buf[start:end:end])
		start = end
	}
	return r.fields, true, nil
}

// binaryChunk is the most a value's length makes the reader allocate
// ahead of the bytes that arrive: a length is only a claim.
const binaryChunk = 64 << 10

// readValue appends the next size bytes to buf.
func (r *BinaryReader) readValue(size int) error {
	for size > 0 {
		n := min(size, binaryChunk)
		r.buf = slices.Grow(r.buf, n)
		at := len(r.buf)
		r.buf = r.buf[:at+n]
		if err := r.readFull(r.buf[at:]); err != nil {
			return err
		}
		size -= n
	}
	return nil
}

// AppendBinaryHeader appends the signature, no flags and an empty
// header extension.
func AppendBinaryHeader(dst []byte) []byte {
	dst = append(dst, copyBinarySignature...)
	return append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
}

// AppendBinaryTuple appends the start of a tuple of n fields (its field
// count); each field follows, as AppendBinaryNull or as StartBinaryField,
// the value's bytes and FinishBinaryField.
func AppendBinaryTuple(dst []byte, n int) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(n))
}

// AppendBinaryNull appends a NULL field.
func AppendBinaryNull(dst []byte) []byte {
	return append(dst, 0xff, 0xff, 0xff, 0xff)
}

// StartBinaryField appends the length of a field still to be written and
// returns where it stands; the caller appends the value's bytes, then
// FinishBinaryField fills in the length.
func StartBinaryField(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

// FinishBinaryField sets the length of the field started at at to the
// bytes appended since.
func FinishBinaryField(dst []byte, at int) []byte {
	binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// AppendBinaryTrailer appends the field count of -1 that ends the data.
func AppendBinaryTrailer(dst []byte) []byte {
	return append(dst, 0xff, 0xff)
}
