package cluster

import "streamdb/catalog"

// Roots are the views of group that read no materialized view (directly
// or through plain views): the views whose restart restarts the rest of
// the group, which read them through their changes.
func Roots(group Group, descs []*catalog.Descriptor) []string {
	byName := make(map[string]*catalog.Descriptor, len(descs))
	for _, d := range descs {
		byName[d.Name] = d
	}
	var out []string
	for _, name := range group.Views {
		if d, ok := byName[name]; ok && len(viewsRead(d, byName)) == 0 {
			out = append(out, name)
		}
	}
	return out
}
