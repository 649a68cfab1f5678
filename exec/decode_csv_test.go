package exec

import (
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/types"
)

// TestDecodeCSV: one CSV record per message, positional or under a header
// line, with the delimiter, quote and null string of the stream's
// options; quoted fields keep delimiters, line breaks and doubled quotes
// and are never NULL; anything else is an error (the message is skipped).
func TestDecodeCSV(t *testing.T) {
	cols := []types.Column{{Name: "id", Type: types.Int4}, {Name: "name", Type: types.Text}, {Name: "price", Type: types.Numeric}}
	dec := func(opts map[string]string) *RowDecoder {
		opts["x"] = "" // options are never nil for a CSV stream
		return NewRowDecoder(cols).WithMetadata(&catalog.Descriptor{Format: catalog.FormatCSV, Options: opts, Columns: catalog.ColumnsFrom(cols)})
	}
	show := func(r types.Row) string {
		parts := make([]string, len(r))
		for i, v := range r {
			if v.IsNull() {
				parts[i] = "NULL"
			} else {
				parts[i] = types.FormatText(v, cols[i].Type)
			}
		}
		return strings.Join(parts, "|")
	}
	for _, c := range []struct {
		opts      map[string]string
		msg, want string // want "" : an error
	}{
		{map[string]string{}, "1,apple,1.5", "1|apple|1.5"},
		{map[string]string{}, "1,apple,1.5\r\n", "1|apple|1.5"},
		{map[string]string{}, `2,"pear, ""green""` + "\nnew" + `",`, "2|pear, \"green\"\nnew|NULL"},
		{map[string]string{}, `3,"",`, "3||NULL"},
		{map[string]string{}, "4,x", ""},
		{map[string]string{}, "4,x,1,2", ""},
		{map[string]string{}, "x,y,1", ""},
		{map[string]string{}, "1,a,1\n2,b,2", ""},
		{map[string]string{}, `1,a"b,1`, ""},
		{map[string]string{}, `1,"a"b,1`, ""},
		{map[string]string{}, `1,"ab,1`, ""},
		{map[string]string{}, "1,a\x00,1", ""},
		{map[string]string{"delimiter": ";", "null": "NULL", "quote": "'"}, "5;'a;b';NULL", "5|a;b|NULL"},
		{map[string]string{"delimiter": ";", "null": "NULL", "quote": "'"}, "5;'NULL';1", "5|NULL|1"},
		{map[string]string{"delimiter": ";", "null": "NULL"}, "5;;1", "5||1"},
		{map[string]string{"delimiter": ";", "null": "NULL"}, "5;a;", ""},
		{map[string]string{"header": "true"}, "price,id,other\n2.5,6,zz", "6|NULL|2.5"},
		{map[string]string{"header": "true"}, "price,id\n2.5,6\n", "6|NULL|2.5"},
		{map[string]string{"header": "true"}, "price,id\n", ""},
		{map[string]string{"header": "true"}, "price,id\n1", ""},
	} {
		row, err := dec(c.opts).Decode([]byte(c.msg))
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%v %q: decoded %s, want an error", c.opts, c.msg, show(row))
		case c.want != "" && err != nil:
			t.Errorf("%v %q: %v", c.opts, c.msg, err)
		case c.want != "" && show(row) != c.want:
			t.Errorf("%v %q: %q, want %q", c.opts, c.msg, show(row), c.want)
		}
	}
}

// TestEncodeCSVRoundTrip: what EncodeCSV writes (an INSERT into a CSV
// stream) decodes back to the same row under the same options, with
// INCLUDE columns left out of the message.
func TestEncodeCSVRoundTrip(t *testing.T) {
	cols := []types.Column{{Name: "id", Type: types.Int4}, {Name: "name", Type: types.Text}, {Name: "subj", Type: types.Text}}
	rows := []types.Row{
		{types.NewInt(1), types.NewString("plain"), types.Null},
		{types.NewInt(2), types.NewString(`a;b,"c"` + "\nd\r"), types.Null},
		{types.NewInt(3), types.NewString(""), types.Null},
		{types.NewInt(4), types.NewString("NULL"), types.Null},
		{types.Null, types.Null, types.Null},
	}
	for _, opts := range []map[string]string{
		{},
		{"delimiter": ";", "null": "NULL", "quote": "'"},
		{"header": "true", "delimiter": "\t"},
	} {
		d := &catalog.Descriptor{Format: catalog.FormatCSV, Options: opts, Columns: catalog.ColumnsFrom(cols)}
		d.Columns[2].Metadata = catalog.MetaSubject
		dec := NewRowDecoder(cols).WithMetadata(d)
		for _, r := range rows {
			msg, err := EncodeCSV(d, cols, r)
			if err != nil {
				t.Fatalf("%v %v: %v", opts, r, err)
			}
			got, err := dec.Decode(msg)
			if err != nil {
				t.Fatalf("%v: %q: %v", opts, msg, err)
			}
			for i := range r {
				if got[i].IsNull() != r[i].IsNull() || (!r[i].IsNull() && types.FormatText(got[i], cols[i].Type) != types.FormatText(r[i], cols[i].Type)) {
					t.Errorf("%v: %q read back as %v, want %v", opts, msg, got, r)
					break
				}
			}
		}
	}
	if _, err := EncodeCSV(&catalog.Descriptor{Format: catalog.FormatCSV, Columns: catalog.ColumnsFrom(cols)}, cols, types.Row{types.NewInt(1), types.NewString("a\x00"), types.Null}); err == nil {
		t.Errorf("EncodeCSV wrote text holding NUL")
	}
}
