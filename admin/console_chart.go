package admin

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 720
	chartHeight = 220
	chartMargin = 40
	// chartPoints is how many of the newest checkpoints the chart shows.
	chartPoints = 100
)

// checkpointChartSVG draws the duration and the size of the newest
// completed checkpoints of SHOW CHECKPOINTS (oldest first), each line on
// its own scale (duration on the left axis, size on the right), as Flink's
// checkpoint history does.
func checkpointChartSVG(cps table) template.HTML {
	idCol, statusCol, durCol, sizeCol := cps.col("id"), cps.col("status"), cps.col("duration_ms"), cps.col("size_bytes")
	if idCol < 0 || statusCol < 0 || durCol < 0 || sizeCol < 0 {
		return ""
	}
	var ids []string
	var durations, sizes []float64
	for _, r := range cps.Rows {
		if r[statusCol] != "completed" {
			continue
		}
		d, _ := strconv.ParseFloat(r[durCol], 64)
		s, _ := strconv.ParseFloat(r[sizeCol], 64)
		ids, durations, sizes = append(ids, r[idCol]), append(durations, d), append(sizes, s)
	}
	if n := len(ids); n > chartPoints {
		ids, durations, sizes = ids[n-chartPoints:], durations[n-chartPoints:], sizes[n-chartPoints:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="checkpoint-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="checkpoint duration and size">`,
		chartWidth, chartHeight, chartWidth, chartHeight)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>`,
		chartMargin, chartMargin/2, chartWidth-2*chartMargin, chartHeight-chartMargin-chartMargin/2)
	if len(ids) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no completed checkpoint yet</text></svg>`, chartMargin+10, chartHeight/2)
		return template.HTML(b.String())
	}
	maxDur, maxSize := maxOf(durations), maxOf(sizes)
	b.WriteString(polyline("duration", "#1f77b4", durations, maxDur))
	b.WriteString(polyline("size", "#d62728", sizes, maxSize))
	fmt.Fprintf(&b, `<text x="4" y="14" fill="#1f77b4">duration (max %.1f ms)</text>`, maxDur)
	fmt.Fprintf(&b, `<text x="%d" y="14" fill="#d62728" text-anchor="end">size (max %s)</text>`, chartWidth-4, formatBytes(maxSize))
	fmt.Fprintf(&b, `<text x="%d" y="%d">checkpoint %s</text>`, chartMargin, chartHeight-8, ids[0])
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">checkpoint %s</text>`, chartWidth-chartMargin, chartHeight-8, ids[len(ids)-1])
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// polyline draws values scaled to max over the plot area.
func polyline(class, color string, values []float64, max float64) string {
	plotW := float64(chartWidth - 2*chartMargin)
	plotH := float64(chartHeight - chartMargin - chartMargin/2)
	var pts []string
	for i, v := range values {
		x := float64(chartMargin)
		if len(values) > 1 {
			x += plotW * float64(i) / float64(len(values)-1)
		}
		y := float64(chartMargin/2) + plotH
		if max > 0 {
			y -= plotH * v / max
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	return fmt.Sprintf(`<polyline class="%s" fill="none" stroke="%s" stroke-width="2" points="%s"/>`, class, color, strings.Join(pts, " "))
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

// formatBytes writes n in KiB, MiB or GiB.
func formatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return strconv.FormatFloat(n, 'f', 1, 64) + " " + units[i]
}
