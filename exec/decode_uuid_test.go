package exec

import (
	"testing"

	"streamdb/types"
)

// TestRowDecoderUUID: a uuid column takes a JSON string in any of uuid's
// input forms, and null; a string that is no uuid, a number, a boolean,
// an object or an array is an error (the message is skipped).
func TestRowDecoderUUID(t *testing.T) {
	cols := []types.Column{{Name: "u", Type: types.UUID}, {Name: "n", Type: types.Int4}}
	d := NewRowDecoder(cols)
	for in, want := range map[string]string{
		`{"u":"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11","n":1}`: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|1",
		`{"u":"{a0eebc999c0b4ef8bb6d6bb9bd380a11}"}`:         "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|NULL",
		`{"u":null,"n":2}`: "NULL|2",
		`{"n":3}`:          "NULL|3",
	} {
		row, err := d.Decode([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := rowText(cols, row); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{`{"u":"nope"}`, `{"u":" a0eebc999c0b4ef8bb6d6bb9bd380a11"}`, `{"u":1}`,
		`{"u":true}`, `{"u":{}}`, `{"u":[]}`} {
		if row, err := d.Decode([]byte(in)); err == nil {
			t.Errorf("%s decoded as %s", in, rowText(cols, row))
		}
	}
}
