package exec

import (
	"fmt"
	"reflect"
	"testing"

	"streamdb/types"
)

// TestRowDecoderKeyStats checks the member statistics: messages count
// once per unmatched key however often they repeat it, only messages
// that decode count, and columns are seen only through decoded messages.
func TestRowDecoderKeyStats(t *testing.T) {
	cols := []types.Column{{Name: "i", Type: types.Int8}, {Name: "s", Type: types.Text}, {Name: "never", Type: types.Text}}
	d := NewRowDecoder(cols)
	for _, msg := range []string{
		`{"i": 1, "customerId": 7}`,
		`{"customerId": 8, "i": 2, "customerId": 9}`, // once, though twice
		`{"s": "x", "extra": {"a": 1}}`,
		`{"i": "not a number", "bad": 1}`, // fails: not counted
		`not json`,
		`{"never": null}`, // a null member is seen
		`{}`,
	} {
		d.Decode([]byte(msg))
	}
	got := d.KeyStats()
	want := KeyStats{
		Decoded: 5, Unmatched: 3,
		Columns: []string{"i", "s", "never"}, Seen: []bool{true, true, true},
		Keys: []KeyCount{{"customerId", 2}, {"extra", 1}, {"bad", 0}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("KeyStats() = %+v\nwant %+v", got, want)
	}

	d = NewRowDecoder(cols)
	d.Decode([]byte(`{"i": 1}`))
	if got := d.KeyStats(); !reflect.DeepEqual(got.Seen, []bool{true, false, false}) || got.Unmatched != 0 {
		t.Fatalf("KeyStats() = %+v, want only i seen and nothing unmatched", got)
	}
}

// TestRowDecoderKeyStatsBounds checks the bound on named keys and columns
// past 64.
func TestRowDecoderKeyStatsBounds(t *testing.T) {
	var cols []types.Column
	for i := range 70 {
		cols = append(cols, types.Column{Name: fmt.Sprintf("c%d", i), Type: types.Int8})
	}
	d := NewRowDecoder(cols)
	msg := `{"c0": 1, "c69": 2`
	for i := range maxTrackedKeys + 3 {
		msg += fmt.Sprintf(`, "k%d": 0`, i)
	}
	msg += "}"
	for range 2 {
		if _, err := d.Decode([]byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	got := d.KeyStats()
	if len(got.Keys) != maxTrackedKeys || got.Keys[0] != (KeyCount{"k0", 2}) || got.OtherKeys != 2 || got.Unmatched != 2 {
		t.Fatalf("KeyStats() = %+v, want %d keys of 2 messages and 2 other", got, maxTrackedKeys)
	}
	if !got.Seen[0] || !got.Seen[69] || got.Seen[1] || got.Seen[68] {
		t.Fatalf("Seen = %v, want c0 and c69 only", got.Seen)
	}
}

// TestRowDecoderKeyStatsNoAllocs checks that counting allocates nothing
// per message once a key has been seen.
func TestRowDecoderKeyStatsNoAllocs(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Int8}}
	d := NewRowDecoder(cols)
	msgs := [][]byte{[]byte(`{"k": 1, "x": 2, "v": 3}`), []byte(`{"y": 1, "k": 2}`)}
	c := &Chunk{}
	d.decodeInto(msgs[0], c)
	d.decodeInto(msgs[1], c)
	allocs := testing.AllocsPerRun(100, func() {
		c.recycle()
		for _, m := range msgs {
			if err := d.decodeInto(m, c); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run, want 0", allocs)
	}
}
