package admin

import (
	"strings"
	"testing"
	"time"
)

func TestGraphLayoutColumnsByDepth(t *testing.T) {
	g := &pipelineGraph{nodes: map[string]*graphNode{}}
	for _, n := range [][2]string{{"s", "stream"}, {"t", "table"}, {"v1", "materialized view"}, {"v2", "materialized view"}, {"k", "sink"}, {"lone", "stream"}} {
		g.add(n[0], n[1])
	}
	g.edges = []graphEdge{{from: "s", to: "v1"}, {from: "v1", to: "v2"}, {from: "t", to: "v2"}, {from: "v2", to: "k"}}
	var got []string
	for _, col := range g.layout() {
		var names []string
		for _, n := range col {
			names = append(names, n.name)
		}
		got = append(got, strings.Join(names, ","))
	}
	// t is read first by v2: it stands just before it.
	if want := "lone,s|t,v1|v2|k"; strings.Join(got, "|") != want {
		t.Errorf("columns %q, want %q", strings.Join(got, "|"), want)
	}
	if svg := string(g.svg()); strings.Count(svg, `class="node"`) != 6 || strings.Count(svg, `class="edge"`) != 4 {
		t.Errorf("svg draws %d nodes and %d edges, want 6 and 4", strings.Count(svg, `class="node"`), strings.Count(svg, `class="edge"`))
	}
}

func TestHistoryRates(t *testing.T) {
	h := &history{}
	at := time.Unix(1000, 0)
	for i, in := range []float64{10, 60, 60, 5} { // the last one: the view was replaced
		h.record(at.Add(time.Duration(i)*historyPeriod), viewMetrics{rowsIn: map[string]float64{"v": in}, rowsOut: map[string]float64{"v": in}})
	}
	var rates []string
	for _, p := range h.series("v") {
		if p.hasRate {
			rates = append(rates, formatRate(p.inRate))
		} else {
			rates = append(rates, "-")
		}
	}
	if got, want := strings.Join(rates, " "), "- 10 rows/s 0 rows/s -"; got != want {
		t.Errorf("rates %q, want %q", got, want)
	}
	if in, _, ok := h.latestRate("v"); !ok || in != 0 {
		t.Errorf("latest rate %v %v, want 0 (the newest period with a rate)", in, ok)
	}
	for i := 0; i < historySamples+10; i++ {
		h.record(at, viewMetrics{})
	}
	if len(h.samples) != historySamples {
		t.Errorf("history holds %d samples, want at most %d", len(h.samples), historySamples)
	}
}

func TestHistoryEdgeRate(t *testing.T) {
	h := &history{}
	at := time.Unix(1000, 0)
	key := [2]string{"s", "v"}
	if _, ok := h.edgeRate("s", "v"); ok {
		t.Errorf("a rate before any sample")
	}
	h.record(at, viewMetrics{positions: map[[2]string]float64{key: 100}})
	if _, ok := h.edgeRate("s", "v"); ok {
		t.Errorf("a rate from one sample")
	}
	h.record(at.Add(historyPeriod), viewMetrics{positions: map[[2]string]float64{key: 150}})
	h.record(at.Add(2*historyPeriod), viewMetrics{}) // the view was dropped for a while
	if r, ok := h.edgeRate("s", "v"); !ok || formatMsgRate(r) != "10 msg/s" {
		t.Errorf("rate %v %v, want 10 msg/s: 50 messages in %s", r, ok, historyPeriod)
	}
	h.record(at.Add(3*historyPeriod), viewMetrics{positions: map[[2]string]float64{key: 20}})
	if r, ok := h.edgeRate("s", "v"); ok {
		t.Errorf("rate %v after the position went back (a rollback), want none", r)
	}
}

func TestIsBehind(t *testing.T) {
	for _, c := range []struct {
		unread, freshness float64
		want              bool
	}{{0, 0, false}, {1, 0.02, false}, {3, 0.9, false}, {1, 1, true}, {500, 12, true}} {
		if got := isBehind(c.unread, c.freshness); got != c.want {
			t.Errorf("isBehind(%v unread, %v s old) = %v, want %v", c.unread, c.freshness, got, c.want)
		}
	}
}
