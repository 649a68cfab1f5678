package pgcopy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"streamdb/sqlerr"
)

func mustFormat(t testing.TB, o Options) *Format {
	t.Helper()
	f, err := NewFormat(&o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// readAll reads every record of data; each is shown as its fields
// (NULL, or the text in %q, with * after a quoted CSV field) and its line.
func readAll(f *Format, data string) (string, error) {
	r := NewTextReader(f, strings.NewReader(data))
	var sb strings.Builder
	for {
		fields, ok, err := r.Next()
		if err != nil {
			return sb.String(), fmt.Errorf("line %d: %w", r.Line(), err)
		}
		if !ok {
			return sb.String(), nil
		}
		fmt.Fprintf(&sb, "%d:", r.Line())
		for i, v := range fields {
			if v.Null {
				sb.WriteString(" NULL")
			} else {
				fmt.Fprintf(&sb, " %q", v.S)
			}
			if r.Quoted(i) {
				sb.WriteString("*")
			}
		}
		sb.WriteString("\n")
	}
}

func TestTextReader(t *testing.T) {
	text := mustFormat(t, Options{})
	csv := mustFormat(t, Options{Options: map[string]string{"format": "csv"}})
	csvEsc := mustFormat(t, Options{Options: map[string]string{"format": "csv", "escape": `\`, "quote": "'", "null": `\N`}})
	pipe := mustFormat(t, Options{Options: map[string]string{"delimiter": "|", "null": "NULL"}})
	for _, tc := range []struct {
		name string
		f    *Format
		data string
		want string
	}{
		{"text fields", text, "1\tab\t\\N\n2\t\t\\\\N\n", "1: \"1\" \"ab\" NULL\n2: \"2\" \"\" \"\\\\N\"\n"},
		{"text escapes", text, `a\tb\nc\\d\101\x41\x\q` + "\n", "1: \"a\\tb\\nc\\\\dAAxq\"\n"},
		{"text control escapes", text, `\b\f\r\v\0` + "\n", "1: \"\\b\\f\\r\\v\\x00\"\n"},
		{"text end marker", text, "a\n\\.\nb\n", "1: \"a\"\n"},
		{"text crlf and no final newline", text, "a\r\nb", "1: \"a\"\n2: \"b\"\n"},
		{"text escaped delimiter", pipe, "a\\|b|NULL|c\n", "1: \"a|b\" NULL \"c\"\n"},
		{"csv fields", csv, "1,,\"\",\"a,b\"\n", "1: \"1\" NULL \"\"* \"a,b\"*\n"},
		{"csv doubled quote", csv, "\"a\"\"b\",c\n", "1: \"a\\\"b\"* \"c\"\n"},
		{"csv multi-line", csv, "\"a\nb\",c\nd,e\n", "1: \"a\\nb\"* \"c\"\n3: \"d\" \"e\"\n"},
		// PostgreSQL 15 keeps a CR LF inside a quoted field as it is; the
		// record's own line ending goes.
		{"csv quoted crlf", csv, "\"a\r\nb\",c\r\n\"d\ne\"\n", "1: \"a\\r\\nb\"* \"c\"\n3: \"d\\ne\"*\n"},
		{"csv end marker and quoted marker", csv, "\"\\.\"\n\\.\nx\n", "1: \"\\\\.\"*\n"},
		{"csv escape", csvEsc, `'a\'b\\c\d',\N,'\N'` + "\n", "1: \"a'b\\\\c\\\\d\"* NULL \"\\\\N\"*\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(tc.f, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("read %q:\n%s\nwant:\n%s", tc.data, got, tc.want)
			}
		})
	}
}

func TestTextReaderErrors(t *testing.T) {
	text := mustFormat(t, Options{})
	csv := mustFormat(t, Options{Options: map[string]string{"format": "csv"}})
	for _, tc := range []struct {
		name string
		f    *Format
		data string
		line int
		code string
		msg  string
	}{
		{"invalid utf8 line", text, "a\n\xff\n", 2, sqlerr.CharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8"`},
		{"invalid utf8 escape", text, "ok\n\\xff\n", 2, sqlerr.CharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8"`},
		{"unterminated quote", csv, "a\n\"b\nc\n", 2, sqlerr.BadCopyFileFormat, "unterminated CSV quoted field"},
		{"invalid utf8 inside quotes", csv, "\"a\n\xfe\"\n", 1, sqlerr.CharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(tc.f, tc.data)
			var e *sqlerr.Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Message != tc.msg || !strings.HasPrefix(err.Error(), fmt.Sprintf("line %d:", tc.line)) {
				t.Errorf("read %q: %v, want line %d: %s %q", tc.data, err, tc.line, tc.code, tc.msg)
			}
		})
	}
}

func TestAppendValue(t *testing.T) {
	text := mustFormat(t, Options{})
	pipe := mustFormat(t, Options{Options: map[string]string{"delimiter": "|"}})
	csv := mustFormat(t, Options{Options: map[string]string{"format": "csv"}})
	csvEsc := mustFormat(t, Options{Options: map[string]string{"format": "csv", "escape": `\`, "null": "NULL"}})
	for _, tc := range []struct {
		f     *Format
		in    string
		force bool
		want  string
	}{
		{text, "plain", false, "plain"},
		{text, "a\\b\nc\rd\te\bf\fg\vh", false, `a\\b\nc\rd\te\bf\fg\vh`},
		{text, "a|b", false, "a|b"},
		{pipe, "a|b\tc", false, `a\|b\tc`},
		{csv, "plain", false, "plain"},
		{csv, "plain", true, `"plain"`},
		{csv, "", false, `""`},
		{csv, `\.`, false, `"\."`},
		{csv, "a,b", false, `"a,b"`},
		{csv, `say "hi"`, false, `"say ""hi"""`},
		{csv, "two\nlines", false, "\"two\nlines\""},
		{csv, "cr\r", false, "\"cr\r\""},
		{csvEsc, `NULL`, false, `"NULL"`},
		{csvEsc, `a"b\c`, false, `"a\"b\\c"`},
	} {
		if got := string(tc.f.AppendValue([]byte("<"), tc.in, tc.force)); got != "<"+tc.want {
			t.Errorf("%s AppendValue(%q, force=%t) = %q, want %q", tc.f.Kind, tc.in, tc.force, got, "<"+tc.want)
		}
	}
	rec := csv.AppendRecord(nil, []Field{{S: "a"}, {Null: true}, {S: ""}, {S: "x,y"}})
	if string(rec) != "a,,\"\",\"x,y\"\n" {
		t.Errorf("csv AppendRecord = %q", rec)
	}
	rec = text.AppendRecord(nil, []Field{{S: "a\tb"}, {Null: true}})
	if string(rec) != "a\\tb\t\\N\n" {
		t.Errorf("text AppendRecord = %q", rec)
	}
}
