package pgcopy

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"streamdb/sqlerr"
)

// fuzzFormat builds a text or CSV format from fuzzed options; ok is false
// when NewFormat refuses them, or for a line break as the CSV quote or
// escape (PostgreSQL accepts one; no file can use it).
func fuzzFormat(kind uint8, delim, quote, escape byte, null string) (*Format, bool) {
	if kind%2 == 1 && (quote == '\n' || quote == '\r' || escape == '\n' || escape == '\r') {
		return nil, false
	}
	opts := map[string]string{"null": null}
	if kind%2 == 1 {
		opts["format"] = "csv"
		opts["quote"], opts["escape"] = string(quote), string(escape)
	}
	opts["delimiter"] = string(delim)
	f, err := NewFormat(&Options{From: true, Options: opts})
	return f, err == nil
}

// FuzzCopyRoundTrip: a record that AppendRecord writes, TextReader reads back
// field for field; binary tuples likewise. Values are valid UTF-8 (as SQL
// text is). Skipped, as PostgreSQL cannot read them back either: a record
// whose only field is NULL with \. as the null string (the end marker),
// and in text format a value written as the null string (read as NULL)
// and a null string ending in a backslash.
func FuzzCopyRoundTrip(f *testing.F) {
	f.Add(uint8(0), byte('\t'), byte('"'), byte('"'), `\N`, "a\x00b\x00\\N\x00", uint16(0b100))
	f.Add(uint8(1), byte(','), byte('"'), byte('"'), "", "x,y\x00\x00say \"hi\"\x00two\nlines", uint16(0b10))
	f.Add(uint8(1), byte(';'), byte('\''), byte('\\'), "NULL", "it's\x00NULL\x00back\\slash\x00\n", uint16(0))
	f.Add(uint8(0), byte('|'), byte('"'), byte('"'), "", "a|b\x00\\.\x00\t\n\r\b\f\v", uint16(0b1))
	f.Fuzz(func(t *testing.T, kind uint8, delim, quote, escape byte, null, values string, nulls uint16) {
		vals := strings.Split(values, "\x00")
		if len(vals) > 16 || !utf8.ValidString(values) || !utf8.ValidString(null) {
			return
		}
		fields := make([]Field, len(vals))
		for i, v := range vals {
			if nulls&(1<<i) != 0 {
				fields[i] = Field{Null: true}
			} else {
				fields[i] = Field{S: v}
			}
		}
		tuple := make([][]byte, len(fields))
		for i, v := range fields {
			if !v.Null {
				tuple[i] = []byte(v.S)
			}
		}
		bin := AppendBinaryHeader(nil)
		bin = AppendBinaryTuple(bin, len(tuple))
		for _, v := range tuple {
			if v == nil {
				bin = AppendBinaryNull(bin)
				continue
			}
			var at int
			bin, at = StartBinaryField(bin)
			bin = FinishBinaryField(append(bin, v...), at)
		}
		bin = AppendBinaryTrailer(bin)
		br := NewBinaryReader(bytes.NewReader(bin))
		got, ok, err := br.Next(len(tuple))
		if err != nil || !ok || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tuple) {
			t.Fatalf("binary %q read back as %q, %t, %v", tuple, got, ok, err)
		}
		if _, ok, err := br.Next(len(tuple)); ok || err != nil {
			t.Fatalf("binary: after the tuple: %t, %v; want the end", ok, err)
		}

		format, ok := fuzzFormat(kind, delim, quote, escape, null)
		if !ok {
			return
		}
		if len(fields) == 1 && fields[0].Null && format.Null == `\.` {
			return
		}
		if format.Kind == Text && strings.HasSuffix(format.Null, `\`) {
			// A backslash ending the null string escapes the delimiter or
			// line break written after it, in PostgreSQL too.
			return
		}
		if format.Kind == Text {
			for _, v := range fields {
				if !v.Null && string(format.AppendValue(nil, v.S, false)) == format.Null {
					return
				}
			}
		}
		rec := format.AppendRecord(nil, fields)
		r := NewTextReader(format, bytes.NewReader(append(rec, rec...)))
		for n := 0; n < 2; n++ {
			back, ok, err := r.Next()
			if err != nil || !ok {
				t.Fatalf("%s record %q of %+v: read back %t, %v", format.Kind, rec, fields, ok, err)
			}
			if !slices.EqualFunc(back, fields, sameField) {
				t.Fatalf("%s record %q of %+v read back as %+v", format.Kind, rec, fields, back)
			}
		}
		if _, ok, err := r.Next(); ok || err != nil {
			t.Fatalf("%s: after two records: %t, %v; want the end", format.Kind, ok, err)
		}
	})
}

// FuzzCopyDecode: the readers never panic on arbitrary data, and every error
// they return carries a SQLSTATE of bad COPY data.
func FuzzCopyDecode(f *testing.F) {
	f.Add(uint8(0), byte('\t'), []byte("a\tb\\n\\x41\n\\.\n"), uint8(2))
	f.Add(uint8(1), byte(','), []byte("\"a\nb\",\"c\"\"d\"\n,\n"), uint8(2))
	f.Add(uint8(2), byte(','), []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01a\xff\xff"), uint8(1))
	f.Fuzz(func(t *testing.T, kind uint8, delim byte, data []byte, ncols uint8) {
		if kind%3 == 2 {
			r := NewBinaryReader(bytes.NewReader(data))
			for i := 0; i < 1000; i++ {
				_, ok, err := r.Next(int(ncols))
				if err != nil {
					checkCopyError(t, err)
				}
				if !ok {
					return
				}
			}
			return
		}
		format, ok := fuzzFormat(kind, delim, '"', '"', `\N`)
		if !ok {
			return
		}
		r := NewTextReader(format, bytes.NewReader(data))
		for {
			_, ok, err := r.Next()
			if err != nil {
				checkCopyError(t, err)
			}
			if !ok {
				return
			}
		}
	})
}

// sameField compares fields as values: a NULL's text (CSV keeps the null
// string there for FORCE_NOT_NULL) does not count.
func sameField(a, b Field) bool {
	return a.Null == b.Null && (a.Null || a.S == b.S)
}

func checkCopyError(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if msg == "" || strings.Contains(msg, "*") || strings.Contains(msg, "pgcopy.") {
		t.Fatalf("error %q does not read as a COPY data error", msg)
	}
	code := sqlerr.From(err).Code
	if code != "22P04" && code != "22021" {
		t.Fatalf("error %q has SQLSTATE %q, want 22P04 or 22021", msg, code)
	}
}
