package exec

import (
	"testing"

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
