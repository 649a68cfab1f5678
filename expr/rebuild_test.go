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

// TestRebuildRefusesChangedArguments checks that a record whose call
// would be built with an argument cast again (here the int4 operand of an
// int4 + int8 sum, or of an array of int4 and int8) is refused, naming
// the argument, instead of being rebuilt as a different call; the text
// fallback for old array records does not apply to such a record either.
func TestRebuildRefusesChangedArguments(t *testing.T) {
	args := []Expr{&ColRef{Idx: 0, T: types.Int4}, &ColRef{Idx: 1, T: types.Int8}}
	_, err := Rebuild("+", true, args, types.Int8, types.Modifier{})
	if err == nil || err.Error() != "+ rebuilds with argument 1 changed to "+castOf(t, args[0], types.Int8) {
		t.Fatalf("int4 + int8 recorded without its cast: got %v", err)
	}
	if e, err := Rebuild("array", false, args, types.Text, types.Modifier{}); err == nil {
		t.Fatalf("array of int4 and int8 recorded as text without its cast rebuilt as %s", e)
	}
}

// castOf is how the cast of e to to prints.
func castOf(t *testing.T, e Expr, to types.Type) string {
	t.Helper()
	c, err := Cast(e, to)
	if err != nil {
		t.Fatal(err)
	}
	return c.String()
}
