package plan

import "streamdb/catalog"

// StatefulNodes lists the nodes of a streaming plan (RewriteStreaming's
// output) whose operators keep state: aggregates, joins, limits, top-Ns,
// stream scans with a WATERMARK, and VALUES (whether it sent its rows).
// The order is a depth-first walk from
// the root, each node once, which is the order exec numbers their state
// tables in.
func StatefulNodes(root Node) []Node {
	var out []Node
	seen := map[Node]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		switch x := n.(type) {
		case *Scan:
			if x.Object.Kind == catalog.KindStream && x.Watermark != nil {
				out = append(out, n)
			}
		case *Aggregate, *Join, *Limit, *TopN, *Values:
			out = append(out, n)
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return out
}

// ReemitNeeded reports whether n, a kept operator of a new plan, must send
// its state downstream: no stateful operator sits above it, so the view's
// rows (emptied by the swap) are rebuilt from its output.
func ReemitNeeded(root, n Node) bool {
	var found, under bool
	var walk func(x Node, stateful bool)
	walk = func(x Node, stateful bool) {
		if found {
			return
		}
		if x == n {
			found, under = true, stateful
			return
		}
		switch x.(type) {
		case *Aggregate, *Join, *Limit, *TopN:
			stateful = true
		}
		for _, c := range x.Children() {
			walk(c, stateful)
		}
	}
	walk(root, false)
	return found && !under
}

// UnkeptSources lists, once each in walk order, the objects whose rows
// reach the root of a streaming plan through stateless operators only
// (filters, projections, unions, windows): no operator's state holds
// those rows, only the view's table does. An ALTER empties that table, so
// such rows come back only by reading those inputs again.
func UnkeptSources(root Node) []string {
	var out []string
	seen := map[Node]bool{}
	named := map[string]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		switch x := n.(type) {
		case *Aggregate, *Join, *Limit, *TopN:
			return
		case *Scan:
			if !named[x.Object.Name] {
				named[x.Object.Name] = true
				out = append(out, x.Object.Name)
			}
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return out
}
