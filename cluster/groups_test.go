package cluster

import (
	"fmt"
	"reflect"
	"testing"

	"streamdb/catalog"
)

func obj(id uint32, name string, kind catalog.ObjectKind, reads ...string) *catalog.Descriptor {
	return &catalog.Descriptor{ID: id, Name: name, Kind: kind, DependsOn: reads}
}

func mv(id uint32, name string, reads ...string) *catalog.Descriptor {
	return obj(id, name, catalog.KindView, reads...)
}

func groupViews(gs []Group) [][]string {
	var out [][]string
	for _, g := range gs {
		out = append(out, g.Views)
	}
	return out
}

func TestGroups(t *testing.T) {
	s := obj(1, "s", catalog.KindStream)
	tb := obj(2, "t", catalog.KindTable)
	for _, c := range []struct {
		name  string
		descs []*catalog.Descriptor
		want  [][]string
		ids   []uint32
	}{
		{"no views", []*catalog.Descriptor{s, tb}, nil, nil},
		{"chain", []*catalog.Descriptor{s, mv(5, "c", "b"), mv(3, "a", "s"), mv(4, "b", "a")},
			[][]string{{"a", "b", "c"}}, []uint32{3}},
		{"diamond", []*catalog.Descriptor{s, mv(3, "top", "s"), mv(4, "l", "top"), mv(5, "r", "top"), mv(6, "bottom", "l", "r")},
			[][]string{{"bottom", "l", "r", "top"}}, []uint32{3}},
		{"views over one stream are separate groups", []*catalog.Descriptor{s, tb, mv(3, "a", "s"), mv(4, "b", "s", "t"), mv(5, "c", "t")},
			[][]string{{"a"}, {"b"}, {"c"}}, []uint32{3, 4, 5}},
		{"view over two views joins their groups", []*catalog.Descriptor{s, mv(7, "x", "s"), mv(3, "y", "t"), mv(9, "both", "x", "y"), mv(4, "other", "s")},
			[][]string{{"both", "x", "y"}, {"other"}}, []uint32{3, 4}},
		{"disjoint chains", []*catalog.Descriptor{mv(10, "a1", "s"), mv(11, "a2", "a1"), mv(12, "b1", "t"), mv(13, "b2", "b1")},
			[][]string{{"a1", "a2"}, {"b1", "b2"}}, []uint32{10, 12}},
		{"plain view between views is an edge", []*catalog.Descriptor{s, mv(3, "base", "s"), obj(4, "pv", catalog.KindPlainView, "base"), mv(5, "top", "pv")},
			[][]string{{"base", "top"}}, []uint32{3}},
		{"plain view over a stream is not an edge", []*catalog.Descriptor{s, obj(4, "pv", catalog.KindPlainView, "s"), mv(5, "a", "pv"), mv(6, "b", "pv")},
			[][]string{{"a"}, {"b"}}, []uint32{5, 6}},
		{"unpopulated view is a vertex", []*catalog.Descriptor{mv(3, "a", "s"), obj(4, "nd", catalog.KindUnpopulatedView, "a")},
			[][]string{{"a", "nd"}}, []uint32{3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Groups(c.descs)
			if !reflect.DeepEqual(groupViews(got), c.want) {
				t.Fatalf("groups %v, want %v", groupViews(got), c.want)
			}
			for i, g := range got {
				if g.ID != c.ids[i] {
					t.Errorf("group %v has id %d, want %d (its smallest view id)", g.Views, g.ID, c.ids[i])
				}
			}
		})
	}
}

// A view read by a view of every group merges them all, whatever order
// the descriptors come in.
func TestGroupsOrderFree(t *testing.T) {
	var descs []*catalog.Descriptor
	var all []string
	for i := range 20 {
		name := fmt.Sprintf("v%02d", i)
		descs = append(descs, mv(uint32(100+i), name, "s"))
		all = append(all, name)
	}
	descs = append(descs, mv(50, "top", all...))
	want := [][]string{append([]string{"top"}, all...)}
	for _, order := range [][]*catalog.Descriptor{descs, reversed(descs)} {
		got := Groups(order)
		if !reflect.DeepEqual(groupViews(got), want) || got[0].ID != 50 {
			t.Fatalf("groups %v (id %d), want one group of all with id 50", groupViews(got), got[0].ID)
		}
	}
}

func reversed(ds []*catalog.Descriptor) []*catalog.Descriptor {
	out := make([]*catalog.Descriptor, len(ds))
	for i, d := range ds {
		out[len(ds)-1-i] = d
	}
	return out
}
