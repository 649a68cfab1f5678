package expr

import (
	"strings"
	"testing"

	"streamdb/types"
)

// TestVisit: every node, parents first, and the tree is left as it was.
func TestVisit(t *testing.T) {
	a := &ColRef{Idx: 0, Name: "a", T: types.Int8}
	one := &Const{D: types.NewInt(1), T: types.Int8}
	inner := &Func{Name: "+", Args: []Expr{a, one}, T: types.Int8}
	p := &Param{N: 0, T: types.Int8}
	root := &Func{Name: "=", Args: []Expr{inner, p}, T: types.Bool}
	args := root.Args
	var seen []string
	Visit(root, func(x Expr) { seen = append(seen, x.String()) })
	if got, want := strings.Join(seen, " | "), "=(+(a, 1), $1) | +(a, 1) | a | 1 | $1"; got != want {
		t.Fatalf("visited %q, want %q", got, want)
	}
	if &root.Args[0] != &args[0] || root.Args[0] != inner || inner.Args[0] != a {
		t.Fatal("Visit changed the tree")
	}
}
