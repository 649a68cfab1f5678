package admin

import (
	"fmt"
	"html/template"
	"strings"
)

// viewRowsLimit is how many of a view's rows its page shows.
const viewRowsLimit = 100

// viewRows is the first page of a view's rows, optionally filtered to
// those whose column (as text) contains a string.
type viewRows struct {
	Rows    table
	Columns []string // every column of the view, for the filter's choice
	Column  string
	Filter  string
	Limit   int
}

// readViewRows runs the rows query of the view page. The filter reaches
// SQL only as a quoted literal and the column only as a quoted name of
// the view's own columns.
func readViewRows(q *request, view string) (viewRows, string) {
	vr := viewRows{Limit: viewRowsLimit, Filter: q.r.URL.Query().Get("filter"), Column: q.r.URL.Query().Get("column")}
	from := quoteIdent(view)
	shape, err := q.query("SELECT * FROM " + from + " LIMIT 0")
	if err != "" {
		return vr, err
	}
	vr.Columns = shape.Columns
	where := ""
	if vr.Filter != "" {
		if shape.col(vr.Column) < 0 {
			return vr, fmt.Sprintf("the view has no column %q to filter on; choose one of its columns", vr.Column)
		}
		where = fmt.Sprintf(" WHERE strpos(CAST(%s AS text), %s) > 0", quoteIdent(vr.Column), quoteLiteral(vr.Filter))
	}
	vr.Rows, err = q.query(fmt.Sprintf("SELECT * FROM %s%s LIMIT %d", from, where, viewRowsLimit))
	return vr, err
}

// quoteLiteral quotes s as a standard SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// viewChartSVG draws a view's rows in per second and its freshness over
// the console's history, each on its own scale.
func viewChartSVG(pts []viewPoint) template.HTML {
	var rates, fresh []float64
	for _, p := range pts {
		if p.hasRate {
			rates = append(rates, p.inRate)
		}
		if p.hasFreshness {
			fresh = append(fresh, p.freshness)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="view-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="rows in per second and freshness over time">`,
		chartWidth, chartHeight, chartWidth, chartHeight)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>`,
		chartMargin, chartMargin/2, chartWidth-2*chartMargin, chartHeight-chartMargin-chartMargin/2)
	if len(rates) < 2 && len(fresh) < 2 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">collecting: the chart fills in every %s</text></svg>`, chartMargin+10, chartHeight/2, historyPeriod)
		return template.HTML(b.String())
	}
	maxRate, maxFresh := maxOf(rates), maxOf(fresh)
	b.WriteString(polyline("rate", "#1f77b4", rates, maxRate))
	b.WriteString(polyline("freshness", "#2ca02c", fresh, maxFresh))
	fmt.Fprintf(&b, `<text x="4" y="14" fill="#1f77b4">rows in (max %s)</text>`, formatRate(maxRate))
	fmt.Fprintf(&b, `<text x="%d" y="14" fill="#2ca02c" text-anchor="end">age of its data (max %.1f s)</text>`, chartWidth-4, maxFresh)
	fmt.Fprintf(&b, `<text x="%d" y="%d">%s ago</text>`, chartMargin, chartHeight-8, pts[len(pts)-1].at.Sub(pts[0].at).Round(historyPeriod))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">now</text>`, chartWidth-chartMargin, chartHeight-8)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
