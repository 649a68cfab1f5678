package exec

import (
	"strings"
	"testing"
	"unicode/utf8"

	"streamdb/catalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// TestDecodeJSONBColumn: a jsonb column takes its member's value as it is
// (nested objects and arrays, scalars, null as the JSON null), a json
// column keeps the text; a missing member is NULL.
func TestDecodeJSONBColumn(t *testing.T) {
	cols := []types.Column{{Name: "id", Type: types.Int8}, {Name: "doc", Type: types.JSONB}, {Name: "raw", Type: types.JSON}}
	dec := NewRowDecoder(cols)
	for _, tc := range []struct{ in, doc, raw string }{
		{`{"id": 1, "doc": {"user": {"id": 7, "tier": "gold"}, "items": [1, 2.50], "user": 3}, "raw": [1,  {"a" :2}]}`,
			`{"user": 3, "items": [1, 2.50]}`, `[1,  {"a" :2}]`},
		{`{"id": 2, "doc": "x\u00e9", "raw": "y"}`, `"xé"`, `"y"`},
		{`{"id": 3, "doc": null, "raw": 1e2}`, `null`, `1e2`},
		{`{"id": 4}`, "", ""},
	} {
		row, err := dec.Decode([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if tc.doc == "" {
			if !row[1].IsNull() || !row[2].IsNull() {
				t.Fatalf("%s: missing members read as %v %v", tc.in, row[1], row[2])
			}
			continue
		}
		if row[1].K != types.KindJSONB || row[1].S != tc.doc || row[2].K != types.KindJSON || row[2].S != tc.raw {
			t.Fatalf("%s: read %q %q, want %q %q", tc.in, row[1].S, row[2].S, tc.doc, tc.raw)
		}
	}
	if _, err := dec.Decode([]byte(`{"id": 5, "doc": "\u0000"}`)); err == nil {
		t.Fatal("jsonb holding \\u0000 was accepted")
	}
}

// TestEncodeJSONBRoundTrip: table rows with json and jsonb values, SQL
// NULL and the JSON null among them, read back exactly.
func TestEncodeJSONBRoundTrip(t *testing.T) {
	cols := []types.Column{{Name: "doc", Type: types.JSONB}, {Name: "raw", Type: types.JSON}}
	jb := func(s string) types.Datum {
		d, err := types.ParseJSONB(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, row := range []types.Row{
		{jb(`{"a": [1, 1.50, {"b": null}]}`), types.NewJSONText(`{"x" : 1}`)},
		{jb(`null`), types.Null},
		{types.Null, types.NewJSONText(`null`)},
		{jb(`"s"`), types.NewJSONText(`"t"`)},
	} {
		buf, err := EncodeJSON(cols, row)
		if err != nil {
			t.Fatalf("%v: %v", row, err)
		}
		got, err := NewRowDecoder(cols).Decode(buf)
		if err != nil {
			t.Fatalf("%s: %v", buf, err)
		}
		for i := range row {
			if got[i].K != row[i].K || got[i].S != row[i].S {
				t.Fatalf("%s: column %d read back as %v, want %v", buf, i, got[i], row[i])
			}
		}
	}
}

// TestDecodeWholeMessage: whole_message = true takes any JSON value as
// the column's jsonb (canonical) or json (as sent) value, and refuses
// what is not JSON or not UTF-8 (22021, as a text member is refused).
func TestDecodeWholeMessage(t *testing.T) {
	for _, typ := range []types.Type{types.JSONB, types.JSON} {
		cols := []types.Column{{Name: "doc", Type: typ}}
		desc := &catalog.Descriptor{Columns: []catalog.Column{{Name: "doc", Type: typ.String()}},
			Options: map[string]string{catalog.OptWholeMessage: "true"}}
		dec := NewRowDecoder(cols).WithMetadata(desc)
		for _, tc := range []struct{ in, jsonb string }{
			{`{"k": "a", "v": 1, "k": "b", "n": {"z": 1, "a": [1.50, -0]}}`, `{"k": "b", "n": {"a": [1.50, 0], "z": 1}, "v": 1}`},
			{`{"k": "x\u00e9\n"}`, `{"k": "xé\n"}`},
			{"{\"é\": \"ü\"}", `{"é": "ü"}`},
			{` [1, "a"] `, `[1, "a"]`},
			{`"s"`, `"s"`},
			{`1e2`, `100`},
		} {
			row, err := dec.Decode([]byte(tc.in))
			if err != nil {
				t.Fatalf("%s %s: %v", typ, tc.in, err)
			}
			want := tc.jsonb
			if typ == types.JSON {
				want = tc.in
			}
			if got := types.FormatText(row[0], typ); got != want {
				t.Fatalf("%s %s: read %q, want %q", typ, tc.in, got, want)
			}
		}
		bad := []string{"{\"k\": \"\xff\"}", "[\"a\xed\xa0\x80\"]", "{\"\xc3\": 1}", `{"k": 1`, `{} x`, ``}
		if typ == types.JSONB {
			bad = append(bad, `{"k": "\u0000"}`) // json keeps the escape as sent, as PostgreSQL's does
		}
		for _, in := range bad {
			if row, err := dec.Decode([]byte(in)); err == nil {
				t.Fatalf("%s %q was accepted as %q", typ, in, row[0].S)
			} else if strings.Contains(in, "\\u0000") || !utf8.ValidString(in) {
				if code := sqlerr.Code(err); code != sqlerr.CharacterNotInRepertoire && code != sqlerr.UntranslatableCharacter {
					t.Fatalf("%s %q: error %v (SQLSTATE %q)", typ, in, err, code)
				}
			}
		}
	}
}
