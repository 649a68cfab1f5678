package exec

import (
	"math/rand"
	"testing"

	"streamdb/sqlerr"
	"streamdb/types"
)

// TestChangelogExactColumns: rows of booleans, integers and text, which
// skip the read-back check after the first, still decode to what was
// encoded, text with quotes, escapes, control characters and non-ASCII
// included; a value out of its column's range still fails as the check
// would fail it.
func TestChangelogExactColumns(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "s", Type: types.Text}, {Name: "b", Type: types.Bool}, {Name: "i", Type: types.Int2}}
	if !exactJSONColumns(cols) {
		t.Fatal("bigint, text, boolean and smallint columns should be exact")
	}
	seed := int64(11)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	texts := []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\r", "ctl \x01\x1f", "é ü 漢字 🎉", "null"}
	var changes []Change
	for i := 0; i < 5000; i++ {
		row := types.Row{types.NewInt(rng.Int63() - rng.Int63()), types.NewString(texts[rng.Intn(len(texts))]), types.NewBool(rng.Intn(2) == 0), types.NewInt(int64(rng.Intn(65536) - 32768))}
		if rng.Intn(10) == 0 {
			row[1+rng.Intn(3)] = types.Null
		}
		sign := Insert
		if rng.Intn(5) == 0 {
			sign = Delete
		}
		changes = append(changes, Change{Row: row, Sign: sign})
	}
	msgs, err := EncodeChangelogChunks(cols, changes, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 2 {
		t.Fatalf("%d messages, want several", len(msgs))
	}
	dec := NewChangelogDecoder(cols)
	var got []Change
	for _, m := range msgs {
		chs, err := dec.Decode(m)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, chs...)
	}
	if len(got) != len(changes) {
		t.Fatalf("%d changes decoded, want %d", len(got), len(changes))
	}
	for i, ch := range changes {
		if got[i].Sign != ch.Sign {
			t.Fatalf("change %d: sign %d, want %d", i, got[i].Sign, ch.Sign)
		}
		for j, c := range cols {
			if types.FormatText(got[i].Row[j], c.Type) != types.FormatText(ch.Row[j], c.Type) || got[i].Row[j].IsNull() != ch.Row[j].IsNull() {
				t.Fatalf("change %d column %s: %v, want %v", i, c.Name, got[i].Row[j], ch.Row[j])
			}
		}
	}

	// Out of smallint's range, past the first row: refused.
	bad := append(changes[:1:1], Change{Row: types.Row{types.NewInt(1), types.NewString("x"), types.NewBool(true), types.NewInt(70000)}, Sign: Insert})
	if _, err := EncodeChangelogChunks(cols, bad, 64<<10); err == nil || sqlerr.Code(err) == "" {
		t.Fatalf("smallint 70000: %v, want an error with a SQLSTATE", err)
	}
	// NUL in new text, past the first row: refused (22021).
	bad = append(changes[:1:1], Change{Row: types.Row{types.NewInt(1), types.NewString("a\x00b"), types.NewBool(true), types.NewInt(1)}, Sign: Insert})
	if _, err := EncodeChangelogChunks(cols, bad, 64<<10); sqlerr.Code(err) != sqlerr.CharacterNotInRepertoire {
		t.Fatalf("text with NUL: %v, want 22021", err)
	}
	if exactJSONColumns([]types.Column{{Name: "v", Type: types.Varchar, Mod: types.Modifier{Length: 3}}}) {
		t.Fatal("varchar(3) should not be exact")
	}
}

// TestChangelogNamesChecked: with the columns' names already read back,
// no row is read back, the first included, yet a first row the check
// would refuse (NUL in text, a smallint out of range) is still refused,
// and the rows decode to what was encoded.
func TestChangelogNamesChecked(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "s", Type: types.Text}, {Name: "i", Type: types.Int2}}
	rows := []Change{
		{Row: types.Row{types.NewInt(1), types.NewString(`a "quoted" \ one`), types.NewInt(-32768)}, Sign: Insert},
		{Row: types.Row{types.NewInt(2), types.Null, types.NewInt(7)}, Sign: Delete},
	}
	msgs, err := EncodeChangelogChunksNamesChecked(cols, rows, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewChangelogDecoder(cols).Decode(msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Row[1].S != rows[0].Row[1].S || got[0].Row[2].I != -32768 || got[1].Sign != Delete || !got[1].Row[1].IsNull() {
		t.Fatalf("decoded %v, want %v", got, rows)
	}
	nul := []Change{{Row: types.Row{types.NewInt(1), types.NewString("a\x00b"), types.NewInt(1)}, Sign: Insert}}
	if _, err := EncodeChangelogChunksNamesChecked(cols, nul, 64<<10); sqlerr.Code(err) != sqlerr.CharacterNotInRepertoire {
		t.Fatalf("first row's text with NUL: %v, want 22021", err)
	}
	big := []Change{{Row: types.Row{types.NewInt(1), types.NewString("x"), types.NewInt(70000)}, Sign: Insert}}
	if _, err := EncodeChangelogChunksNamesChecked(cols, big, 64<<10); err == nil || sqlerr.Code(err) == "" {
		t.Fatalf("first row's smallint 70000: %v, want an error with a SQLSTATE", err)
	}
}
