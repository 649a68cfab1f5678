package cluster

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"streamdb/catalog"
)

func validTask() TaskManifest {
	views := []TaskView{{Name: "a", ID: 3, Layout: "x"}, {Name: "b", ID: 4, Layout: "y"}}
	return TaskManifest{V: ManifestVersion, Group: 3, Checkpoint: 9, Epoch: 40, Views: views,
		Spans: []SpanFile{
			{Start: []byte("o1"), End: []byte("o2"), File: "g3-000.span", Keys: 2, Size: 10, SHA256: "ab"},
			{Start: []byte("s1"), End: []byte("s2")},
		},
		Catalog: CatalogDigest(views)}
}

// TestTaskManifestDecodesStrictly: a task manifest round-trips; an unknown
// field, another version, a catalog digest that is not its views', and
// spans out of order, overlapping, empty, or with keys but no file are
// refused.
func TestTaskManifestDecodesStrictly(t *testing.T) {
	enc := func(m TaskManifest) []byte {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	good := validTask()
	if _, err := DecodeTaskManifest(enc(good)); err != nil {
		t.Fatalf("a valid task manifest: %v", err)
	}
	bad := map[string]func(m *TaskManifest){
		"version":          func(m *TaskManifest) { m.V = 2 },
		"catalog":          func(m *TaskManifest) { m.Views[1].Layout = "z" },
		"no views":         func(m *TaskManifest) { m.Views = nil; m.Catalog = CatalogDigest(nil) },
		"out of order":     func(m *TaskManifest) { m.Spans[0], m.Spans[1] = m.Spans[1], m.Spans[0] },
		"overlap":          func(m *TaskManifest) { m.Spans[0].End = []byte("s1a") },
		"empty span":       func(m *TaskManifest) { m.Spans[1].End = []byte("s1") },
		"keys but no file": func(m *TaskManifest) { m.Spans[1].Keys = 3 },
	}
	for name, change := range bad {
		m := validTask()
		m.Views = append([]TaskView(nil), m.Views...)
		m.Spans = append([]SpanFile(nil), m.Spans...)
		change(&m)
		if _, err := DecodeTaskManifest(enc(m)); err == nil {
			t.Errorf("%s: decoded, want an error", name)
		}
	}
	withField := strings.Replace(string(enc(good)), `"v":1`, `"v":1,"extra":true`, 1)
	if _, err := DecodeTaskManifest([]byte(withField)); err == nil {
		t.Error("an unknown field: decoded, want an error")
	}
	if _, err := DecodeTaskManifest(append(enc(good), []byte(" {}")...)); err == nil {
		t.Error("trailing data: decoded, want an error")
	}
}

// TestLayoutDigest: what fixes a view's state changes the digest; its
// creation time, comment and name (renames keep state) do not.
func TestLayoutDigest(t *testing.T) {
	d := &catalog.Descriptor{ID: 7, Name: "v", Kind: catalog.KindView, Query: "SELECT 1", CreatedAt: time.Unix(1, 0)}
	base := LayoutDigest(d)
	same := *d
	same.CreatedAt, same.Comment, same.Name = time.Unix(2, 0), "hi", "w"
	if LayoutDigest(&same) != base {
		t.Error("creation time, comment or name changed the layout digest")
	}
	for name, change := range map[string]func(d *catalog.Descriptor){
		"id":       func(d *catalog.Descriptor) { d.ID = 8 },
		"query":    func(d *catalog.Descriptor) { d.Query = "SELECT 2" },
		"op state": func(d *catalog.Descriptor) { d.OpState = map[string][]uint16{"n1": {2}} },
		"vnodes":   func(d *catalog.Descriptor) { d.VNodes = 256 },
	} {
		other := *d
		change(&other)
		if LayoutDigest(&other) == base {
			t.Errorf("another %s kept the layout digest", name)
		}
	}
}
