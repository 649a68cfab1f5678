package expr

import (
	"testing"

	"streamdb/types"
)

// TestJSONPathRebuild: the jsonb_path_ calls and the jsonpath cast that
// views record rebuild as the same expressions.
func TestJSONPathRebuild(t *testing.T) {
	doc := &ColRef{Idx: 0, Name: "doc", T: types.JSONB}
	path := &ColRef{Idx: 1, Name: "p", T: types.Text}
	cast, err := JSONPathCast(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"jsonb_path_exists", "jsonb_path_match_opr", "jsonb_path_query_array", "jsonb_path_query_first"} {
		e, err := Call(name, []Expr{doc, cast})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f := e.(*Func)
		if _, err := Rebuild(f.Name, f.Infix, f.Args, f.T, f.Mod); err != nil {
			t.Errorf("rebuild %s: %v", name, err)
		}
	}
	f := cast.(*Func)
	if _, err := Rebuild(f.Name, f.Infix, f.Args, f.T, f.Mod); err != nil {
		t.Errorf("rebuild the jsonpath cast: %v", err)
	}
}

// TestJSONPathEval spot-checks paths whose PostgreSQL answers the slt
// files do not reach.
func TestJSONPathEval(t *testing.T) {
	for _, c := range []struct{ doc, path, want string }{
		{`{"a": [1, 2, 3]}`, `$.a[last - 1 to last]`, `[2, 3]`},
		{`{"a": {"b": [{"c": 1}, {"c": 2}]}}`, `$.a.b.c`, `[1, 2]`},
		{`[1, "a", null]`, `$[*] ? (@ != 1)`, `[null]`}, // "a" != 1 is unknown
		{`{"x": 2}`, `$.x * $.x - 1`, `[3]`},
		// lax: true at the first true pair though another is unknown;
		// strict: unknown at the first unknown pair.
		{`{"a": ["x", 1]}`, `$.a == 1`, `[true]`},
		{`{"a": ["x", 1]}`, `strict $.a[*] == 1`, `[null]`},
		{`{"a": [1, "x"]}`, `strict $.a[*] == 1`, `[null]`},
		{`{"a": ["x", 2]}`, `$.a == 1`, `[null]`},
	} {
		d, err := types.ParseJSONB(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		e, err := Call("jsonb_path_query_array", []Expr{&Const{D: d, T: types.JSONB}, &Const{D: types.NewString(c.path), T: types.Text}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Eval(nil)
		if err != nil {
			t.Fatalf("%s over %s: %v", c.path, c.doc, err)
		}
		if v.S != c.want {
			t.Errorf("%s over %s = %s, want %s", c.path, c.doc, v.S, c.want)
		}
	}
}
