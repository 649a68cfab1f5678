package cluster

import (
	"slices"

	"streamdb/catalog"
)

// A Group is a view-group: a connected part of the graph whose vertices
// are the materialized views and whose edges join a view to the views
// it reads. Streams, tables and sources are inputs that views share, not
// edges: two views over one stream are two groups. A plain view is no
// vertex; a view that reads it reads what it reads.
type Group struct {
	// ID is the smallest descriptor id among the group's views: it
	// stays while views are added, and names the group in the
	// placement map.
	ID uint32 `json:"id"`
	// Views are the names of the group's views, sorted.
	Views []string `json:"views"`
	// StateBytes and RowsPerSec are the group's load where known (0
	// otherwise); Assign adds them to the node it places the group on.
	StateBytes int64   `json:"-"`
	RowsPerSec float64 `json:"-"`
}

// isView reports whether d is a materialized view, populated or not
// (an unpopulated one runs after its REFRESH, on its group's node).
func isView(d *catalog.Descriptor) bool {
	return d.Kind == catalog.KindView || d.Kind == catalog.KindUnpopulatedView
}

// Groups returns the view-groups of the catalog objects descs, ordered
// by ID. It is a pure function of descs.
func Groups(descs []*catalog.Descriptor) []Group {
	byName := make(map[string]*catalog.Descriptor, len(descs))
	for _, d := range descs {
		byName[d.Name] = d
	}
	parent := map[string]string{}
	var find func(string) string
	find = func(v string) string {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[ra] = rb
		}
	}
	for _, d := range descs {
		if isView(d) {
			parent[d.Name] = d.Name
		}
	}
	for _, d := range descs {
		if !isView(d) {
			continue
		}
		for _, read := range viewsRead(d, byName) {
			union(d.Name, read)
		}
	}
	members := map[string][]*catalog.Descriptor{}
	for _, d := range descs {
		if isView(d) {
			r := find(d.Name)
			members[r] = append(members[r], d)
		}
	}
	out := make([]Group, 0, len(members))
	for _, ds := range members {
		g := Group{ID: ds[0].ID}
		for _, d := range ds {
			g.ID = min(g.ID, d.ID)
			g.Views = append(g.Views, d.Name)
		}
		slices.Sort(g.Views)
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Group) int { return int64Cmp(int64(a.ID), int64(b.ID)) })
	return out
}

// viewsRead returns the materialized views d reads, directly or through
// plain views.
func viewsRead(d *catalog.Descriptor, byName map[string]*catalog.Descriptor) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(names []string)
	visit = func(names []string) {
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			r, ok := byName[n]
			switch {
			case !ok:
			case isView(r):
				out = append(out, n)
			case r.Kind == catalog.KindPlainView:
				visit(r.DependsOn)
			}
		}
	}
	visit(d.DependsOn)
	return out
}

func int64Cmp(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
