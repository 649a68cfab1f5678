package exec

import (
	"testing"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/types"
)

// A renamed column reads its member key; a column added with a default
// reads it where a message lacks its member, and NULL where the member is
// null.
func TestMessageColumnsKeysAndMissing(t *testing.T) {
	three := "3"
	d := &catalog.Descriptor{Name: "s", Kind: catalog.KindStream, Columns: []catalog.Column{
		{Name: "id", Type: "bigint"},
		{Name: "price", Type: "bigint", Key: "amount"},
		{Name: "qty", Type: "integer", Missing: &three},
	}}
	cols, err := d.Schema()
	if err != nil {
		t.Fatal(err)
	}
	scan := &plan.Scan{Object: d, Cols: cols, Keys: d.MemberKeys()}
	mcols, missing, err := MessageColumns(scan)
	if err != nil {
		t.Fatal(err)
	}
	dec := NewMessageDecoder(mcols, missing)
	for _, tc := range []struct{ msg, want string }{
		{`{"id": 1, "amount": 10}`, "1 10 3"},
		{`{"id": 2, "amount": 20, "qty": 5}`, "2 20 5"},
		{`{"id": 3, "price": 30, "qty": null}`, "3 NULL NULL"},
		{`{}`, "NULL NULL 3"},
	} {
		row, err := dec.Decode([]byte(tc.msg))
		if err != nil {
			t.Fatalf("%s: %v", tc.msg, err)
		}
		got := ""
		for i, v := range row {
			if i > 0 {
				got += " "
			}
			if v.IsNull() {
				got += "NULL"
			} else {
				got += types.FormatText(v, cols[i].Type)
			}
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.msg, got, tc.want)
		}
	}
	if got := d.MemberKeys(); len(got) != 3 || got[1] != "amount" || got[2] != "qty" {
		t.Errorf("MemberKeys = %q", got)
	}
}
