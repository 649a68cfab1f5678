package sql

import (
	"slices"
	"testing"

	"streamdb/exec"
	"streamdb/types"
)

// A foreign key's key, encoded in the referencing columns' order, is
// re-encoded in the order of the key or index it is looked up in.
func TestReorderKey(t *testing.T) {
	vals := []types.Datum{types.NewInt(7), types.NewString("b\x00c"), types.NewInt(-1)}
	ts := []types.Type{types.Int8, types.Text, types.Int8}
	key, ok, err := fkKey(vals, ts)
	if err != nil || !ok {
		t.Fatalf("fkKey: %v, %v", ok, err)
	}
	parts, err := keyParts(key)
	if err != nil || len(parts) != 3 {
		t.Fatalf("keyParts: %d parts, %v", len(parts), err)
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}} {
		got, err := reorderKey(key, order)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, i := range order {
			want = exec.AppendKey(want, vals[i])
		}
		if got != string(want) {
			t.Errorf("order %v: %x, want %x", order, got, want)
		}
	}
	if _, ok, _ := fkKey([]types.Datum{types.NewInt(1), types.Null}, ts[:2]); ok {
		t.Error("a key with a NULL references nothing, yet fkKey encoded it")
	}
}

// positions matches columns as sets, giving each wanted column's place.
func TestPositions(t *testing.T) {
	for _, c := range []struct {
		want, have, out []int
	}{
		{[]int{3, 1}, []int{1, 3}, []int{1, 0}},
		{[]int{1, 3}, []int{1, 3}, []int{0, 1}},
		{[]int{1}, []int{1, 3}, nil},
		{[]int{1, 2}, []int{1, 3}, nil},
	} {
		if got := positions(c.want, c.have); !slices.Equal(got, c.out) {
			t.Errorf("positions(%v, %v) = %v, want %v", c.want, c.have, got, c.out)
		}
	}
}
