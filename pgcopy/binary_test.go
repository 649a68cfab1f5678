package pgcopy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"streamdb/sqlerr"
)

// binaryTuples encodes tuples (nil for NULL) as binary COPY data with its
// header and trailer.
func binaryTuples(tuples ...[][]byte) []byte {
	b := AppendBinaryHeader(nil)
	for _, tup := range tuples {
		b = AppendBinaryTuple(b, len(tup))
		for _, v := range tup {
			if v == nil {
				b = AppendBinaryNull(b)
				continue
			}
			var at int
			b, at = StartBinaryField(b)
			b = append(b, v...)
			b = FinishBinaryField(b, at)
		}
	}
	return AppendBinaryTrailer(b)
}

// readBinary reads every tuple of ncols fields; each is shown as its
// fields (NULL or %q).
func readBinary(data []byte, ncols int) (string, error) {
	r := NewBinaryReader(bytes.NewReader(data))
	var sb strings.Builder
	for {
		fields, ok, err := r.Next(ncols)
		if err != nil {
			return sb.String(), fmt.Errorf("tuple %d: %w", r.Line(), err)
		}
		if !ok {
			return sb.String(), nil
		}
		for _, v := range fields {
			if v == nil {
				sb.WriteString(" NULL")
			} else {
				fmt.Fprintf(&sb, " %q", v)
			}
		}
		sb.WriteString("\n")
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	data := binaryTuples([][]byte{[]byte("ab"), nil, {}}, [][]byte{{0, 1, 2}, []byte("x"), nil})
	if !bytes.HasPrefix(data, []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x02ab\xff\xff\xff\xff\x00\x00\x00\x00")) ||
		!bytes.HasSuffix(data, []byte{0xff, 0xff}) {
		t.Fatalf("binary encoding: %q", data)
	}
	got, err := readBinary(data, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := " \"ab\" NULL \"\"\n \"\\x00\\x01\\x02\" \"x\" NULL\n"; got != want {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
	// PostgreSQL accepts data that ends without the trailer, and a header
	// extension, which it skips.
	noTrailer := data[:len(data)-2]
	if got, err := readBinary(noTrailer, 3); err != nil || strings.Count(got, "\n") != 2 {
		t.Errorf("without the trailer: %q, %v", got, err)
	}
	ext := append([]byte(nil), data[:11]...)
	ext = append(ext, 0, 0, 0, 0, 0, 0, 0, 3, 'e', 'x', 't')
	ext = append(ext, data[19:]...)
	if got2, err := readBinary(ext, 3); err != nil || got2 != got {
		t.Errorf("with a header extension: %q, %v", got2, err)
	}
}

// TestBinaryLargeValues reads values longer than the reader's chunk next
// to short ones, over several tuples.
func TestBinaryLargeValues(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 3*binaryChunk/10+7)
	data := binaryTuples([][]byte{[]byte("a"), big, {}}, [][]byte{nil, []byte("bc"), big[:binaryChunk]})
	r := NewBinaryReader(bytes.NewReader(data))
	want := [][][]byte{{[]byte("a"), big, {}}, {nil, []byte("bc"), big[:binaryChunk]}}
	for i, w := range want {
		fields, ok, err := r.Next(3)
		if err != nil || !ok {
			t.Fatalf("tuple %d: %v, %v", i+1, ok, err)
		}
		for j := range w {
			if !bytes.Equal(fields[j], w[j]) || (fields[j] == nil) != (w[j] == nil) {
				t.Errorf("tuple %d field %d: %d bytes (nil %v), want %d (nil %v)", i+1, j+1, len(fields[j]), fields[j] == nil, len(w[j]), w[j] == nil)
			}
		}
	}
	if _, ok, err := r.Next(3); ok || err != nil {
		t.Errorf("after the last tuple: %v, %v", ok, err)
	}
}

// BenchmarkBinaryReader reads tuples of a bigint, a bigint and a short
// text, as the keyed-writes benchmark's COPY sends them.
func BenchmarkBinaryReader(b *testing.B) {
	tuples := make([][][]byte, 10000)
	for i := range tuples {
		tuples[i] = [][]byte{{0, 0, 0, 0, 0, 0, 1, 2}, {0, 0, 0, 0, 0, 0, 1, 2}, []byte(fmt.Sprintf("row %d", i))}
	}
	data := binaryTuples(tuples...)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewBinaryReader(bytes.NewReader(data))
		for {
			_, ok, err := r.Next(3)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
	}
}

func TestBinaryReaderErrors(t *testing.T) {
	good := binaryTuples([][]byte{[]byte("ab")})
	header := good[:19]
	withFlags := func(flags ...byte) []byte {
		b := append([]byte(nil), good[:11]...)
		return append(append(b, flags...), good[15:]...)
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		ncols int
		msg   string
	}{
		{"empty", nil, 1, "COPY file signature not recognized"},
		{"short signature", []byte("PGCOPY"), 1, "COPY file signature not recognized"},
		{"wrong signature", append([]byte("PGCOPY\n\xff\r\n\x01"), good[11:]...), 1, "COPY file signature not recognized"},
		{"with oids", withFlags(0, 1, 0, 0), 1, "invalid COPY file header (WITH OIDS)"},
		{"critical flag", withFlags(0, 2, 0, 0), 1, "unrecognized critical flags in COPY file header"},
		{"extension too long", append(append(append([]byte(nil), good[:15]...), 0, 0, 0, 9), 'x'), 1, "invalid COPY file header (wrong length)"},
		{"field count", good, 2, "row field count is 1, expected 2"},
		{"half a count", append(append([]byte(nil), header...), 0), 1, "unexpected EOF in COPY data"},
		{"short length", append(append([]byte(nil), header...), 0, 1, 0, 0), 1, "unexpected EOF in COPY data"},
		{"negative size", append(append([]byte(nil), header...), 0, 1, 0xff, 0xff, 0xff, 0xfe), 1, "invalid field size"},
		{"short value", append(append([]byte(nil), header...), 0, 1, 0, 0, 0, 5, 'a'), 1, "unexpected EOF in COPY data"},
		{"length claimed, not sent", append(append([]byte(nil), header...), 0, 1, 0x7f, 0xff, 0xff, 0xff, 'a'), 1, "unexpected EOF in COPY data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readBinary(tc.data, tc.ncols)
			var e *sqlerr.Error
			if !errors.As(err, &e) || e.Code != sqlerr.BadCopyFileFormat || e.Message != tc.msg {
				t.Errorf("read %q: %v, want %s %q", tc.data, err, sqlerr.BadCopyFileFormat, tc.msg)
			}
		})
	}
}
