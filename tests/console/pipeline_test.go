package console

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"streamdb/tests/testutil"
)

// TestConsolePipeline checks the console's pages beyond the overview in
// Chromium: the pipeline graph draws every stream, table, view and sink
// with the edges between them and live rates that move while events
// arrive; a view's page shows its rows, filtered, and a chart over time;
// and the query page runs a SELECT as the logged-in user and refuses
// anything else.
func TestConsolePipeline(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE STREAM clicks (page text, ms int) WITH (subject = 'clicks')",
		"CREATE TABLE pages (page text PRIMARY KEY, owner text)",
		"CREATE MATERIALIZED VIEW page_clicks AS SELECT page, count(*) AS n FROM clicks GROUP BY page",
		"CREATE MATERIALIZED VIEW owner_clicks AS SELECT p.owner, sum(c.n) AS n FROM page_clicks c JOIN pages p ON p.page = c.page GROUP BY p.owner",
		"CREATE SINK owner_feed FROM owner_clicks INTO 'feeds.owner'",
		"INSERT INTO pages VALUES ('home', 'ann'), ('about', 'bob'), ('it''s', 'cy')",
		"INSERT INTO clicks VALUES ('home', 5), ('home', 7), ('about', 3), ('it''s', 1)",
		"FLUSH")
	pg := newPage(t)
	tab := pg.tab
	base := srv.HTTPURL()
	do, text, mustText, screenshot := pg.do, pg.text, pg.mustText, pg.screenshot
	attrs := func(t *testing.T, sel, attr string) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 10*time.Second)
		defer cancel()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(
			`Array.from(document.querySelectorAll(%q)).map(e => e.getAttribute(%q))`, sel, attr)))
		if err != nil {
			t.Fatalf("reading %s[%s]: %v", sel, attr, err)
		}
		return v
	}

	t.Run("graph", func(t *testing.T) {
		do(t, "opening the pipeline", chromedp.Navigate(base+"/graph"))
		nodes := strings.Join(attrs(t, "#pipeline g.node", "data-name"), " ")
		// pages stands just before owner_clicks, its first reader.
		if nodes != "clicks page_clicks pages owner_clicks owner_feed" {
			t.Errorf("graph nodes %q, want clicks page_clicks pages owner_clicks owner_feed (by column)", nodes)
		}
		from, to := attrs(t, "#pipeline g.edge", "data-from"), attrs(t, "#pipeline g.edge", "data-to")
		var edges []string
		for i := range from {
			edges = append(edges, from[i]+"->"+to[i])
		}
		want := "page_clicks->owner_clicks pages->owner_clicks clicks->page_clicks owner_clicks->owner_feed"
		if got := strings.Join(edges, " "); got != want {
			t.Errorf("graph edges %q, want %q", got, want)
		}
		// Once the console has two samples the edge gives a rate too.
		if edge := mustText(t, `#pipeline g.edge[data-from="clicks"]`); !regexp.MustCompile(`^([0-9.]+ msg/s · )?0 behind$`).MatchString(edge) {
			t.Errorf("edge clicks -> page_clicks says %q, want 0 behind", edge)
		}

		// Events keep arriving: within a few samples, the view's box and
		// the edge from the stream show a rate above zero.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			writer := srv.Conn(t)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if err := testutil.ExecSimple(writer, 10*time.Second, fmt.Sprintf("INSERT INTO clicks VALUES ('home', %d)", i)); err != nil {
					t.Errorf("inserting while the graph is open: %v", err)
					return
				}
				if err := testutil.ExecSimple(writer, 10*time.Second, "UPDATE pages SET owner = owner WHERE page = 'home'"); err != nil {
					t.Errorf("updating while the graph is open: %v", err)
					return
				}
			}
		}()
		defer func() { close(stop); wg.Wait() }()
		rate := regexp.MustCompile(`([0-9.]+) rows/s in`)
		msgRate := regexp.MustCompile(`^([0-9.]+) msg/s · [0-9]+ behind$`)
		testutil.Poll(t, 90*time.Second, "page_clicks to show a rate above zero", func() error {
			box, err := text(`#pipeline g.node[data-name="page_clicks"]`)
			if err != nil {
				return err
			}
			m := rate.FindStringSubmatch(box)
			if m == nil {
				return fmt.Errorf("page_clicks's box says %q, no rate yet", box)
			}
			if v, _ := strconv.ParseFloat(m[1], 64); v <= 0 {
				return fmt.Errorf("page_clicks's box says %q", box)
			}
			edge, err := text(`#pipeline g.edge[data-from="clicks"]`)
			if err != nil {
				return err
			}
			m = msgRate.FindStringSubmatch(edge)
			if m == nil {
				return fmt.Errorf("the edge clicks -> page_clicks says %q, no rate yet", edge)
			}
			if v, _ := strconv.ParseFloat(m[1], 64); v <= 0 {
				return fmt.Errorf("the edge clicks -> page_clicks says %q", edge)
			}
			// The table's edge gives its changes per second.
			edge, err = text(`#pipeline g.edge[data-from="pages"]`)
			if err != nil {
				return err
			}
			m = regexp.MustCompile(`^([0-9.]+) changes/s$`).FindStringSubmatch(edge)
			if m == nil {
				return fmt.Errorf("the edge pages -> owner_clicks says %q, no rate yet", edge)
			}
			if v, _ := strconv.ParseFloat(m[1], 64); v <= 0 {
				return fmt.Errorf("the edge pages -> owner_clicks says %q", edge)
			}
			return nil
		})
		screenshot(t, "console-pipeline.png")
	})

	t.Run("view rows", func(t *testing.T) {
		do(t, "opening a filtered view", chromedp.Navigate(base+"/views/owner_clicks?refresh=0"))
		if rows := mustText(t, "#rows"); !strings.Contains(rows, "ann") || !strings.Contains(rows, "bob") {
			t.Errorf("owner_clicks's rows %q, want ann's and bob's", rows)
		}
		do(t, "filtering the rows",
			chromedp.SetValue(chromedp.CSS(`#rows-filter input[name="filter"]`), "an"),
			chromedp.Submit(chromedp.CSS(`#rows-filter input[name="filter"]`)),
			chromedp.WaitVisible(chromedp.CSS(`a[href="?"]`)))
		if rows := mustText(t, "#rows"); !strings.Contains(rows, "ann") || strings.Contains(rows, "bob") {
			t.Errorf("owner_clicks's rows with owner containing \"an\": %q, want only ann's", rows)
		}
		// A quote in the filter is data, not SQL.
		do(t, "filtering with a quote", chromedp.Navigate(base+"/views/page_clicks?refresh=0&column=page&filter="+"it%27s"))
		if rows, errText := mustText(t, "#rows"), errorText(tab); errText != "" || !strings.Contains(rows, "it's") || strings.Contains(rows, "home") {
			t.Errorf("page_clicks filtered on \"it's\": rows %q, error %q; want only it's", rows, errText)
		}
		// Its operators, with their rows and state sizes.
		ops := mustText(t, "#operators")
		if !strings.Contains(ops, "rows_per_second") || !strings.Contains(ops, "state_bytes") || !strings.Contains(ops, "aggregate") {
			t.Errorf("page_clicks's operators %q, want its aggregate with rows/s and state bytes", ops)
		}
		if chart := attrs(t, "#view-chart", "aria-label"); len(chart) != 1 {
			t.Errorf("the view page has %d charts, want 1", len(chart))
		}
		screenshot(t, "console-view.png")
	})

	t.Run("query", func(t *testing.T) {
		run := func(sql string) {
			t.Helper()
			do(t, "running "+sql,
				chromedp.Navigate(base+"/query"),
				chromedp.SetValue(chromedp.CSS("#sql"), sql),
				chromedp.Click(chromedp.CSS("#run")),
				// The form's page has neither: the answer has one.
				chromedp.WaitVisible(chromedp.CSS("#tag, #error")))
		}
		run("SELECT owner, n FROM owner_clicks WHERE owner <> 'ann' ORDER BY owner")
		if got := strings.Join(strings.Fields(mustText(t, "#result")), " "); got != "owner n bob 1 cy 1" {
			t.Errorf("query result %q, want owner n bob 1 cy 1", got)
		}
		screenshot(t, "console-query.png")
		run("INSERT INTO pages VALUES ('x', 'mallory')")
		if got := errorText(tab); !strings.Contains(got, "only queries") {
			t.Errorf("INSERT on the query page: error %q, want a refusal naming queries", got)
		}
		if n := testutil.Scalar(t, conn, "SELECT count(*) FROM pages"); n != "3" {
			t.Errorf("pages has %s rows after the refused INSERT, want 3", n)
		}
		run("SELECT generate_series(1, 5000)")
		if tag := mustText(t, "#tag"); !strings.Contains(tag, "first 1,000 rows") {
			t.Errorf("a 5,000-row query's tag line %q (error %q), want it to say it shows the first 1,000", tag, errorText(tab))
		}
	})

	t.Run("backpressure", func(t *testing.T) {
		// Paused sources read nothing: what is published meanwhile is
		// behind, and the open graph shows it, then shows it read once
		// the sources resume.
		testutil.MustExec(t, conn, "FLUSH", "ALTER SYSTEM PAUSE")
		resumed := false
		defer func() {
			if !resumed {
				testutil.MustExec(t, srv.Conn(t), "ALTER SYSTEM RESUME")
			}
		}()
		testutil.MustExec(t, conn, "INSERT INTO clicks VALUES ('home', 1), ('home', 2), ('about', 3), ('home', 4), ('home', 5)")
		do(t, "opening the pipeline", chromedp.Navigate(base+"/graph"))
		edge := `#pipeline g.edge[data-from="clicks"]`
		waitEdge := func(what, label string, behind bool) {
			t.Helper()
			testutil.Poll(t, 90*time.Second, what, func() error {
				got, err := text(edge)
				if err != nil {
					return err
				}
				if !strings.HasSuffix(got, label) {
					return fmt.Errorf("the edge says %q", got)
				}
				cls := strings.Join(attrs(t, edge, "class"), " ") + " / " + strings.Join(attrs(t, `#pipeline g.node[data-name="page_clicks"]`, "class"), " ")
				if want := map[bool]string{true: "edge behind / node behind", false: "edge / node"}[behind]; cls != want {
					return fmt.Errorf("the edge and page_clicks's box have classes %q, want %q", cls, want)
				}
				return nil
			})
		}
		waitEdge("the edge clicks -> page_clicks to show 5 messages behind", " 5 behind", true)
		screenshot(t, "console-pipeline-behind.png")
		testutil.MustExec(t, conn, "ALTER SYSTEM RESUME")
		resumed = true
		waitEdge("the open page to show page_clicks caught up", " 0 behind", false)
	})
}

// errorText is the page's error box, or "" when it has none.
func errorText(tab context.Context) string {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#error") || {innerText: ""}).innerText`))
	if err != nil {
		return "evaluating: " + err.Error()
	}
	return v
}
