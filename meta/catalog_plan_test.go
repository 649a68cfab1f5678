package meta

import (
	"errors"
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// TestViewPlan: a view's stored plan is decoded against the live catalog
// without the binder; a view without one is bound from its query; a
// record that does not read is XX001 and one of a version this binary
// does not read 0A000, both naming the view.
func TestViewPlan(t *testing.T) {
	s := &catalog.Descriptor{Name: "s", ID: 1, Kind: catalog.KindStream, Subject: "s", Columns: catalog.ColumnsFrom([]types.Column{{Name: "x", Type: types.Int8}})}
	lookup := func(name string) (*catalog.Descriptor, bool) { return s, name == "s" }
	bound := ""
	bind := func(query string) (plan.Node, error) {
		bound = query
		return scanOf(s)
	}
	root, err := scanOf(s)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := plan.Encode(root, lookup)
	if err != nil {
		t.Fatal(err)
	}

	v := &catalog.Descriptor{Name: "v", Kind: catalog.KindView, Query: "SELECT x FROM s", Plan: rec}
	got, err := ViewPlan(v, lookup, bind)
	if err != nil {
		t.Fatal(err)
	}
	if sc, ok := got.(*plan.Scan); !ok || sc.Object != s || bound != "" {
		t.Errorf("ViewPlan of a stored plan gave %T (bound %q); want the scan of s, decoded, not bound", got, bound)
	}

	old := *v
	old.Plan = nil
	if _, err := ViewPlan(&old, lookup, bind); err != nil || bound != v.Query {
		t.Errorf("ViewPlan of a view without a plan bound %q (%v); want its query bound", bound, err)
	}

	bad := errors.New("")
	for _, tc := range []struct {
		name, plan, code string
	}{
		{"corrupt", `{"version":`, sqlerr.DataCorrupted},
		{"version", `{"version":999999,"root":{}}`, sqlerr.FeatureNotSupported},
	} {
		d := *v
		d.Plan = []byte(tc.plan)
		_, err := ViewPlan(&d, lookup, func(string) (plan.Node, error) { return nil, bad })
		if err == nil {
			t.Fatalf("%s: ViewPlan of a plan that does not read gave no error", tc.name)
		}
		if se := sqlerr.From(err); errors.Is(err, bad) || se.Code != tc.code || !strings.Contains(se.Message, "materialized view v") {
			t.Errorf("%s: ViewPlan: %v (SQLSTATE %s); want SQLSTATE %s naming materialized view v", tc.name, err, se.Code, tc.code)
		}
	}
}
