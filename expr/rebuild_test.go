package expr

import (
	"testing"

	"streamdb/types"
)

// TestRebuildTextArrayRecords checks that a plan record written before
// arrays had types of their own, where the array constructor and
// string_to_array were of type text, still rebuilds: as the typed call
// cast to text, so the view keeps its text column and the same values.
func TestRebuildTextArrayRecords(t *testing.T) {
	cases := []struct {
		name string
		args []Expr
	}{
		{"array", []Expr{&ColRef{Idx: 0, T: types.Int4}, &ColRef{Idx: 1, T: types.Int4}}},
		{"string_to_array", []Expr{&ColRef{Idx: 0, T: types.Text}, &Const{D: types.NewString(","), T: types.Text}}},
	}
	row := types.Row{types.NewInt(3), types.NewInt(4)}
	for _, c := range cases {
		e, err := Rebuild(c.name, false, c.args, types.Text, types.Modifier{})
		if err != nil {
			t.Fatalf("%s of type text: %v", c.name, err)
		}
		if e.Type() != types.Text {
			t.Fatalf("%s rebuilt as %s, want text", c.name, e.Type())
		}
		if c.name != "array" {
			continue
		}
		d, err := e.Eval(row)
		if err != nil || d.S != "{3,4}" {
			t.Fatalf("array(3, 4) rebuilt from a text record evaluates to %v, %v; want {3,4}", d, err)
		}
	}
	// A record whose type matches neither the call nor its text form is
	// still refused.
	if _, err := Rebuild("array", false, cases[0].args, types.Int8, types.Modifier{}); err == nil {
		t.Fatal("array of int4 recorded as bigint rebuilt")
	}
}
