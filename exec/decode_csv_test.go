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
