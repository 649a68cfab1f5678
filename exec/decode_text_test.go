package exec

import (
	"testing"

	"streamdb/sqlerr"
	"streamdb/types"
)

// TestEncodeRefusesNonText: a row whose text is not valid UTF-8 or holds
// NUL is refused with 22021 and PostgreSQL's message; a stored row being
// deleted from a table may hold NUL (older servers accepted it), so that
// it can still be deleted.
func TestEncodeRefusesNonText(t *testing.T) {
	cols := []types.Column{{Name: "s", Type: types.Text}}
	for s, msg := range map[string]string{
		"a\x00b":         `column "s": invalid byte sequence for encoding "UTF8": 0x00`,
		"a\xffb":         `column "s": invalid byte sequence for encoding "UTF8": 0xff`,
		"a\xe2\x28\xa1":  `column "s": invalid byte sequence for encoding "UTF8": 0xe2 0x28 0xa1`,
		"\xf0\x9f\x98":   `column "s": invalid byte sequence for encoding "UTF8": 0xf0 0x9f 0x98`,
		"\xed\xa0\x80zz": `column "s": invalid byte sequence for encoding "UTF8": 0xed 0xa0 0x80`,
	} {
		_, err := EncodeJSON(cols, types.Row{types.NewString(s)})
		if sqlerr.Code(err) != "22021" || err.Error() != msg {
			t.Errorf("EncodeJSON(%q): %v, want 22021 %s", s, err, msg)
		}
		if _, err := EncodeChangelog(cols, []Change{{Row: types.Row{types.NewString(s)}, Sign: Insert}}, 1<<20); sqlerr.Code(err) != "22021" {
			t.Errorf("EncodeChangelog(insert %q): %v, want 22021", s, err)
		}
	}
	msg, err := EncodeChangelog(cols, []Change{{Row: types.Row{types.NewString("a\x00b")}, Sign: Delete}}, 1<<20)
	if err != nil {
		t.Fatalf("deleting a stored row with NUL: %v", err)
	}
	changes, err := NewChangelogDecoder(cols).Decode(msg)
	if err != nil || len(changes) != 1 || changes[0].Row[0].S != "a\x00b" {
		t.Errorf("reading back %s: %v %v", msg, changes, err)
	}
}
