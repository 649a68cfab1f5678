package admin

import (
	"fmt"
	"html"
	"html/template"
	"net/url"
	"sort"
	"strings"
)

// The graph page draws the pipeline as Flink's and RisingWave's
// dashboards do: streams and tables on the left, the views that read
// them to their right (a view over views one column further), sinks
// last. Each edge carries its live figure (messages behind for an edge
// from a stream or table, rows per second out of an upstream view), and a
// view whose inputs are behind (its oldest unread message a second old
// or more) is drawn in the colour of backpressure.
// An edge from a stream or table also gives the messages per second the
// view reads of it.

// graphNode is one box of the graph.
type graphNode struct {
	name, kind string
	status     string // views: SHOW MATERIALIZED VIEWS's status
	detail     string // the second line of the box
	column     int
	row        int
	behind     bool // a view with unread input
	failing    bool // a view with rows that failed
}

type graphEdge struct {
	from, to string
	label    string
	behind   bool
}

// pipelineGraph is the graph of what reads what.
type pipelineGraph struct {
	nodes map[string]*graphNode
	edges []graphEdge
}

func (g *pipelineGraph) add(name, kind string) *graphNode {
	if n, ok := g.nodes[name]; ok {
		return n
	}
	n := &graphNode{name: name, kind: kind}
	g.nodes[name] = n
	return n
}

// layout places every node in a column by its depth (inputs first) and
// orders each column by name. A node without inputs (a stream, table or
// source) stands in the column just before its first reader, so that an
// edge from it into a view over views does not cross the boxes between.
func (g *pipelineGraph) layout() [][]*graphNode {
	inputs := map[string][]string{}
	readers := map[string][]string{}
	for _, e := range g.edges {
		inputs[e.to] = append(inputs[e.to], e.from)
		readers[e.from] = append(readers[e.from], e.to)
	}
	depth := map[string]int{}
	var visit func(name string, seen map[string]bool) int
	visit = func(name string, seen map[string]bool) int {
		if d, ok := depth[name]; ok {
			return d
		}
		if seen[name] { // a cycle cannot happen in a catalog; stay finite anyway
			return 0
		}
		seen[name] = true
		d := 0
		for _, in := range inputs[name] {
			d = max(d, visit(in, seen)+1)
		}
		depth[name] = d
		return d
	}
	var cols [][]*graphNode
	names := make([]string, 0, len(g.nodes))
	for name := range g.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := g.nodes[name]
		n.column = visit(name, map[string]bool{})
		if len(inputs[name]) == 0 && len(readers[name]) > 0 {
			first := -1
			for _, r := range readers[name] {
				if d := visit(r, map[string]bool{}); first < 0 || d < first {
					first = d
				}
			}
			n.column = max(0, first-1)
		}
		for len(cols) <= n.column {
			cols = append(cols, nil)
		}
		n.row = len(cols[n.column])
		cols[n.column] = append(cols[n.column], n)
	}
	return cols
}

// Graph geometry, in SVG user units.
const (
	nodeWidth  = 190
	nodeHeight = 46
	colGap     = 150
	rowGap     = 28
	graphPad   = 16
)

func nodeX(n *graphNode) int { return graphPad + n.column*(nodeWidth+colGap) }
func nodeY(n *graphNode) int { return graphPad + n.row*(nodeHeight+rowGap) }

var kindColors = map[string]string{
	"source": "#fdf3e1", "stream": "#e8f1fb", "table": "#eef7ea", "materialized view": "#fff", "view": "#f7f7f7", "sink": "#f4ecfa",
}

// svg draws the graph.
func (g *pipelineGraph) svg() template.HTML {
	cols := g.layout()
	if len(g.nodes) == 0 {
		return `<p>Nothing to draw yet: create a stream or a table, and a materialized view over it.</p>`
	}
	rows := 0
	for _, c := range cols {
		rows = max(rows, len(c))
	}
	width := 2*graphPad + len(cols)*nodeWidth + (len(cols)-1)*colGap
	height := 2*graphPad + rows*nodeHeight + (rows-1)*rowGap
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="pipeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="streams, tables, views and sinks, and what reads what">`,
		width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#789"/></marker></defs>`)
	for _, e := range g.edges {
		from, to := g.nodes[e.from], g.nodes[e.to]
		x1, y1 := nodeX(from)+nodeWidth, nodeY(from)+nodeHeight/2
		x2, y2 := nodeX(to), nodeY(to)+nodeHeight/2
		color, class := "#789", "edge"
		if e.behind {
			color, class = "#e07b00", "edge behind"
		}
		mx := (x1 + x2) / 2
		fmt.Fprintf(&b, `<g class="%s" data-from="%s" data-to="%s"><path d="M%d,%d C%d,%d %d,%d %d,%d" fill="none" stroke="%s" stroke-width="2" marker-end="url(#arrow)"/>`,
			class, attr(e.from), attr(e.to), x1, y1, mx, y1, mx, y2, x2, y2, color)
		if e.label != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="middle" fill="%s">%s</text>`, mx, (y1+y2)/2-4, color, html.EscapeString(e.label))
		}
		b.WriteString(`</g>`)
	}
	for _, c := range cols {
		for _, n := range c {
			g.drawNode(&b, n)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func (g *pipelineGraph) drawNode(b *strings.Builder, n *graphNode) {
	x, y := nodeX(n), nodeY(n)
	stroke := "#9ab"
	switch {
	case n.status != "" && n.status != "running", n.failing:
		stroke = "#c33"
	case n.behind:
		stroke = "#e07b00"
	}
	fill := kindColors[n.kind]
	if fill == "" {
		fill = "#fff"
	}
	if n.kind == "materialized view" {
		fmt.Fprintf(b, `<a href="/views/%s">`, attr(url.PathEscape(n.name)))
	}
	class := "node"
	if n.failing {
		class += " failing"
	}
	if n.behind {
		class += " behind"
	}
	fmt.Fprintf(b, `<g class="%s" data-name="%s" data-kind="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="%s" stroke-width="2"/>`,
		class, attr(n.name), attr(n.kind), x, y, nodeWidth, nodeHeight, fill, stroke)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`, x+8, y+18, html.EscapeString(clip(n.name, 24)))
	detailColor := "#556"
	if n.failing {
		detailColor = "#c33"
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" fill="%s">%s</text></g>`, x+8, y+36, detailColor, html.EscapeString(clip(n.detail, 32)))
	if n.kind == "materialized view" {
		b.WriteString(`</a>`)
	}
}

func attr(s string) string { return html.EscapeString(s) }

// clip shortens s to n characters with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

type graphBody struct {
	SVG template.HTML
}

func (c *console) graph(q *request) (string, pageData) {
	data := pageData{Title: "Pipeline", Tab: "graph"}
	autoRefresh(q, &data)
	m := gatherViewMetrics()
	g := &pipelineGraph{nodes: map[string]*graphNode{}}
	streams, err := q.query("SHOW STREAMS")
	data.Error = firstError(data.Error, err)
	for _, r := range streams.Rows {
		g.add(r[streams.col("name")], "stream").detail = "subject " + r[streams.col("subject")]
	}
	sources, err := q.query("SHOW SOURCES")
	data.Error = firstError(data.Error, err)
	for _, r := range sources.Rows {
		n := g.add(r[sources.col("name")], "source")
		n.detail = "PostgreSQL · " + r[sources.col("status")]
		if lag := r[sources.col("lag_bytes")]; lag != "" && lag != "0" {
			n.detail, n.behind = "PostgreSQL · "+lag+" bytes behind", true
		}
	}
	tables, err := q.query("SHOW TABLES")
	data.Error = firstError(data.Error, err)
	for _, r := range tables.Rows {
		g.add(r[0], "table").detail = "table"
	}
	views, err := q.query("SHOW MATERIALIZED VIEWS")
	data.Error = firstError(data.Error, err)
	for _, r := range views.Rows {
		name := r[views.col("name")]
		n := g.add(name, "materialized view")
		n.status = r[views.col("status")]
		n.detail = n.status
		if in, _, ok := c.history.latestRate(name); ok && n.status == "running" {
			n.detail = formatRate(in) + " in"
			if f, ok := m.freshness[name]; ok {
				n.detail += fmt.Sprintf(" · %.1f s old", f)
			}
		}
		// Rows that failed are left out of the view: that is what the
		// box must say first, or a view that is empty for it looks fine.
		if failed := m.rowErrors[name]; failed > 0 {
			n.failing = true
			n.detail = failedRows(failed)
			if in, _, ok := c.history.latestRate(name); ok && n.status == "running" {
				n.detail = formatRate(in) + " in · " + n.detail
			}
		}
	}
	sinks, err := q.query("SHOW SINKS")
	data.Error = firstError(data.Error, err)
	for _, r := range sinks.Rows {
		n := g.add(r[sinks.col("name")], "sink")
		n.detail = r[sinks.col("pending_epochs")] + " epochs to publish"
		if st := r[sinks.col("status")]; st != "publishing" {
			n.status, n.detail = st, st
		}
	}
	deps, err := q.query("SELECT object, kind, reads, reads_kind FROM streamdb_dependencies")
	data.Error = firstError(data.Error, err)
	lag := map[[2]string]float64{}
	for stream, readers := range m.streamReaders {
		for _, r := range readers {
			lag[[2]string{stream, r.view}] = r.lag
		}
	}
	for _, r := range deps.Rows {
		object, kind, input, inKind := r[0], r[1], r[2], r[3]
		if inKind == "" {
			inKind = "dropped"
		}
		// Plain views are expanded where they are used: they draw only
		// when something reads them.
		g.add(object, kind)
		g.add(input, inKind)
		e := graphEdge{from: input, to: object}
		switch inKind {
		case "source":
			e.label = "replication"
		case "stream", "table":
			if behind, ok := lag[[2]string{input, object}]; ok {
				e.label = formatCount(behind) + " behind"
				e.behind = isBehind(behind, m.freshness[object])
				if e.behind {
					g.nodes[object].behind = true
				}
			}
			if rate, ok := c.history.edgeRate(input, object); ok {
				e.label = strings.TrimSuffix(formatMsgRate(rate)+" · "+e.label, " · ")
			} else if rate, ok := c.history.edgeRate(input, input); ok && inKind == "table" && e.label == "" {
				// A view reads a table's changes as the table applies
				// them, within the same epoch: the table's own rate is
				// the edge's.
				e.label = formatChangeRate(rate)
			}
		case "materialized view":
			if _, out, ok := c.history.latestRate(input); ok {
				e.label = formatRate(out)
			}
		}
		g.edges = append(g.edges, e)
	}
	data.Body = graphBody{SVG: g.svg()}
	return "graph.html", data
}

// behindAge is how old a view's oldest unread message must be for the
// graph to mark its input edges as behind.
const behindAge = 1.0 // seconds

// isBehind says whether a view with unread messages and the given
// freshness (the age of its oldest unread message) is behind: a message
// or two in flight at the moment of reading is the normal state of a busy
// stream; behind is unread input that has waited a while.
func isBehind(unread, freshness float64) bool { return unread > 0 && freshness >= behindAge }

// formatChangeRate writes a rate of a table's changes per second.
func formatChangeRate(perSecond float64) string {
	return strings.Replace(formatMsgRate(perSecond), "msg/s", "changes/s", 1)
}

// formatMsgRate writes a rate of messages per second.
func formatMsgRate(perSecond float64) string {
	if perSecond >= 10 || perSecond == 0 {
		return fmt.Sprintf("%.0f msg/s", perSecond)
	}
	return fmt.Sprintf("%.1f msg/s", perSecond)
}

// formatRate writes a rate of rows per second.
func formatRate(perSecond float64) string {
	if perSecond >= 10 || perSecond == 0 {
		return fmt.Sprintf("%.0f rows/s", perSecond)
	}
	return fmt.Sprintf("%.1f rows/s", perSecond)
}
