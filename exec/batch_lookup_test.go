package exec

import (
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// TestPinnedKeys checks which filters become point reads of a keyed
// table, and which keys they read.
func TestPinnedKeys(t *testing.T) {
	cols := []types.Column{{Name: "a", Type: types.Int8}, {Name: "b", Type: types.Text}, {Name: "v", Type: types.Int8}}
	scan := &plan.Scan{Object: &catalog.Descriptor{ID: 7, Kind: catalog.KindTable}, Cols: cols, StoredKey: []int{0, 1}}
	col := func(i int) expr.Expr { return &expr.ColRef{Idx: i, T: cols[i].Type} }
	i := func(n int64) expr.Expr { return &expr.Const{D: types.NewInt(n), T: types.Int8} }
	s := func(v string) expr.Expr { return &expr.Const{D: types.NewString(v), T: types.Text} }
	null := &expr.Const{D: types.Null, T: types.Int8}
	bin := func(op string, l, r expr.Expr) expr.Expr {
		e, err := expr.Binary(op, l, r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	in := func(c expr.Expr, list ...expr.Expr) expr.Expr {
		e, err := expr.In(c, list, false)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	key := func(a int64, b string) string {
		k := keyenc.Append(ViewTablePrefix(7), types.NewInt(a))
		return string(keyenc.Append(k, types.NewString(b)))
	}
	for _, c := range []struct {
		name string
		cond expr.Expr
		ok   bool
		keys []string
	}{
		{"both fixed", bin("AND", bin("=", col(0), i(1)), bin("=", s("x"), col(1))), true, []string{key(1, "x")}},
		{"one free", bin("=", col(0), i(1)), false, nil},
		{"IN times =", bin("AND", in(col(0), i(2), i(1), i(2)), bin("=", col(1), s("y"))), true, []string{key(1, "y"), key(2, "y")}},
		{"IN with NULL", bin("AND", in(col(0), null, i(3)), bin("=", col(1), s("y"))), true, []string{key(3, "y")}},
		{"= NULL", bin("AND", bin("=", col(0), null), bin("=", col(1), s("y"))), true, nil},
		{"OR over two columns", bin("AND", bin("OR", bin("=", col(0), i(1)), bin("=", col(2), i(1))), bin("=", col(1), s("y"))), false, nil},
		{"not equality", bin("AND", bin(">", col(0), i(1)), bin("=", col(1), s("y"))), false, nil},
		{"extra condition", bin("AND", bin("AND", bin("=", col(0), i(1)), bin("=", col(1), s("x"))), bin(">", col(2), i(0))), true, []string{key(1, "x")}},
	} {
		keys, ok := PinnedKeys(c.cond, scan)
		if ok != c.ok {
			t.Errorf("%s (%s): ok = %v, want %v", c.name, c.cond, ok, c.ok)
			continue
		}
		var got []string
		for _, k := range keys {
			got = append(got, string(k))
		}
		if len(got) != len(c.keys) {
			t.Errorf("%s: %d keys, want %d", c.name, len(got), len(c.keys))
			continue
		}
		for j := range got {
			if got[j] != c.keys[j] {
				t.Errorf("%s: key %d = %q, want %q", c.name, j, got[j], c.keys[j])
			}
		}
	}
}
