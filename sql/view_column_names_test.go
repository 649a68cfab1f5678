package sql

import (
	"reflect"
	"testing"

	"streamdb/catalog"
)

// TestKeepQueryColumnName: a view keeps the name its text uses through
// several renames, drops the entry when the column is renamed back to
// it, and never changes the view it was given.
func TestKeepQueryColumnName(t *testing.T) {
	v := &catalog.Descriptor{Name: "v", Kind: catalog.KindPlainView}
	v1 := keepQueryColumnName(v, 7, "a", "a", "b")
	if v.QueryColumnNames != nil {
		t.Fatalf("the view given changed: %v", v.QueryColumnNames)
	}
	want := map[uint32]map[string]string{7: {"a": "a"}}
	if !reflect.DeepEqual(v1.QueryColumnNames, want) {
		t.Fatalf("after a -> b: %v, want %v", v1.QueryColumnNames, want)
	}
	v2 := keepQueryColumnName(v1, 7, "a", "b", "c")
	v2 = keepQueryColumnName(v2, 9, "x", "x", "y")
	want = map[uint32]map[string]string{7: {"a": "a"}, 9: {"x": "x"}}
	if !reflect.DeepEqual(v2.QueryColumnNames, want) {
		t.Fatalf("after b -> c and x -> y: %v, want %v", v2.QueryColumnNames, want)
	}
	if !reflect.DeepEqual(v1.QueryColumnNames, map[uint32]map[string]string{7: {"a": "a"}}) {
		t.Fatalf("an earlier copy changed: %v", v1.QueryColumnNames)
	}
	v3 := keepQueryColumnName(v2, 7, "a", "c", "a")
	v3 = keepQueryColumnName(v3, 9, "x", "y", "x")
	if v3.QueryColumnNames != nil {
		t.Fatalf("renamed back: %v, want none", v3.QueryColumnNames)
	}
}
