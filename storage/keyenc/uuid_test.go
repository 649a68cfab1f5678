package keyenc

import (
	"bytes"
	"math/rand"
	"sort"
	"testing"

	"streamdb/types"
)

// TestUUIDKeyOrder checks that uuid keys sort as PostgreSQL 15 sorts uuids
// (the order below is its ORDER BY of these values, NULL last), that
// equal uuids written differently are one key, and that a uuid key is
// prefix-free: a row key of (uuid, int) sorts by the uuid first.
func TestUUIDKeyOrder(t *testing.T) {
	pgOrder := []string{
		"00000000-0000-0000-0000-000000000000",
		"00000000-0000-0000-0000-000000000001",
		"00000000-0000-0000-0000-000000000100",
		"00000000-0000-0000-ff00-000000000000",
		"7fffffff-ffff-ffff-ffff-ffffffffffff",
		"80000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff",
	}
	seed := int64(7)
	rng := rand.New(rand.NewSource(seed))
	vals := make([]types.Datum, 0, len(pgOrder)+1)
	for _, s := range pgOrder {
		d, err := types.ParseUUID(s)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, d)
	}
	vals = append(vals, types.Null)
	shuffled := append([]types.Datum(nil), vals...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	sort.Slice(shuffled, func(i, j int) bool {
		return bytes.Compare(Append(nil, shuffled[i]), Append(nil, shuffled[j])) < 0
	})
	for i := range vals {
		if shuffled[i].IsNull() != vals[i].IsNull() || shuffled[i].S != vals[i].S {
			t.Fatalf("seed %d: key order puts %s at %d, PostgreSQL puts %s there",
				seed, types.FormatText(shuffled[i], types.UUID), i, types.FormatText(vals[i], types.UUID))
		}
	}

	a, _ := types.ParseUUID("{A0EEBC999C0B4EF8BB6D6BB9BD380A11}")
	b, _ := types.ParseUUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
	if !bytes.Equal(Append(nil, a), Append(nil, b)) {
		t.Errorf("equal uuids encode differently")
	}
	lo, hi := vals[1], vals[2] // ...0001 < ...0100
	k1 := AppendRow(nil, types.Row{lo, types.NewInt(1 << 40)})
	k2 := AppendRow(nil, types.Row{hi, types.NewInt(-1)})
	if bytes.Compare(k1, k2) >= 0 {
		t.Errorf("(uuid, int) keys do not sort by the uuid first")
	}
}

// TestUUIDRoundTrip decodes random uuids back from keys and values, in a
// row between other columns.
func TestUUIDRoundTrip(t *testing.T) {
	for i := 0; i < 200; i++ {
		u := types.RandomUUID()
		row := types.Row{types.NewString("x"), u, types.NewInt(int64(i))}
		for _, enc := range [][]byte{AppendRow(nil, row), AppendRowValue(nil, row)} {
			got, rest, err := DecodeRow(enc, len(row))
			if err != nil || len(rest) != 0 {
				t.Fatalf("decode: %v (rest %d)", err, len(rest))
			}
			if got[1].K != types.KindUUID || got[1].S != u.S || got[2].I != int64(i) {
				t.Fatalf("got %+v, want %+v", got, row)
			}
		}
	}
	if _, _, err := Decode([]byte{tagUUID, 1, 2, 3}); err == nil {
		t.Errorf("a truncated uuid key decoded")
	}
}
