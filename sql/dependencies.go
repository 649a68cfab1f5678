package sql

import (
	"sort"

	"streamdb/catalog"
	"streamdb/types"
)

// streamdb_dependencies lists what each view, sink and mirrored table
// reads: one row per (object, input) pair, the edges of the graph of
// sources, streams and tables into views into sinks that the console
// draws. Names are those a reader sees
// in SHOW commands; an input no longer in the catalog (a view being
// replaced) keeps its name with the kind NULL.

const sysTableDependencies = "streamdb_dependencies"

var dependencyColumns = []types.Column{
	{Name: "object", Type: types.Text},
	{Name: "kind", Type: types.Text},
	{Name: "reads", Type: types.Text},
	{Name: "reads_kind", Type: types.Text},
}

func (e *Engine) dependenciesTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableDependencies, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(dependencyColumns)}
	return d, func() []types.Row {
		var rows []types.Row
		edge := func(object string, kind catalog.ObjectKind, input string) {
			inKind := types.Null
			if in, ok := e.lookup(input); ok {
				inKind = types.NewString(string(in.Kind))
			}
			rows = append(rows, types.Row{types.NewString(object), types.NewString(string(kind)), types.NewString(input), inKind})
		}
		for _, kind := range []catalog.ObjectKind{catalog.KindView, catalog.KindUnpopulatedView, catalog.KindPlainView} {
			for _, obj := range e.objects(kind) {
				inputs := append([]string(nil), obj.DependsOn...)
				sort.Strings(inputs)
				for _, in := range inputs {
					edge(obj.Name, kind, in)
				}
			}
		}
		// A mirrored table reads its PostgreSQL source.
		for _, src := range e.objects(catalog.KindSource) {
			for _, t := range src.Source.Tables {
				edge(t.Table, catalog.KindTable, src.Name)
			}
			edge(src.Source.Progress, catalog.KindTable, src.Name)
			for _, secret := range src.Source.Secrets() {
				edge(src.Name, catalog.KindSource, secret)
			}
		}
		sinks, err := e.sinks()
		if err != nil {
			return rows
		}
		sort.Slice(sinks, func(i, j int) bool { return sinks[i].Name < sinks[j].Name })
		for _, s := range sinks {
			edge(s.Name, "sink", s.View)
		}
		return rows
	}
}
