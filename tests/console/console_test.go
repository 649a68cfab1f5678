// Package console tests the web console in headless Chromium against a
// real server: the pages load with the server's views, streams and
// checkpoints, the checkpoint chart draws, and the savepoint buttons
// create a savepoint and roll back to it.
package console

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

func TestConsoleInChromium(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE STREAM clicks (page text, ms int) WITH (subject = 'clicks')",
		"CREATE MATERIALIZED VIEW page_clicks AS SELECT page, count(*) AS n FROM clicks GROUP BY page",
		"INSERT INTO clicks VALUES ('home', 5), ('home', 7), ('about', 3)",
		"FLUSH", "CHECKPOINT", "CHECKPOINT")
	pg := newPage(t)
	tab := pg.tab
	base := srv.HTTPURL()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) { t.Helper(); pg.do(t, what, steps...) }
	text := func(sel string) string { t.Helper(); return pg.mustText(t, sel) }
	screenshot := func(name string) { t.Helper(); pg.screenshot(t, name) }

	do("opening the overview", chromedp.Navigate(base+"/"))
	views, streams := text("#views"), text("#streams")
	screenshot("console-overview.png")
	if !strings.Contains(views, "page_clicks") || !strings.Contains(views, "running") {
		t.Errorf("overview lists views %q, want page_clicks running", views)
	}
	if !strings.Contains(streams, "clicks") || !strings.Contains(streams, "page_clicks (0 behind)") {
		t.Errorf("overview lists streams %q, want clicks read by page_clicks", streams)
	}

	do("opening the view", chromedp.Click(chromedp.CSS(`a[href="/views/page_clicks"]`)))
	dataflow, state := text("#dataflow"), text("#state")
	if !strings.Contains(dataflow, "StreamAggregate") || !strings.Contains(dataflow, "StreamSource clicks") {
		t.Errorf("dataflow %q, want the aggregate over clicks", dataflow)
	}
	if !strings.Contains(state, "page_clicks") {
		t.Errorf("state tables %q, want page_clicks's", state)
	}

	before := countCheckpoints(t, conn)
	do("opening the checkpoints", chromedp.Navigate(base+"/checkpoints"))
	counts := text("#counts")
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	points, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#checkpoint-chart polyline.duration"), "points"))
	cancel()
	if err != nil {
		t.Fatalf("reading the chart: %v", err)
	}
	screenshot("console-checkpoints.png")
	// Periodic checkpoints go on: the page's count lies between the
	// counts SQL gives before and after it.
	after := countCheckpoints(t, conn)
	var shown int
	if _, err := fmt.Sscanf(strings.Join(strings.Fields(counts), " "), "completed %d", &shown); err != nil || shown < before || shown > after || shown < 2 {
		t.Errorf("checkpoint counts %q; SHOW CHECKPOINTS had %d completed before the page and %d after", counts, before, after)
	}
	if !points.Exists || len(strings.Fields(points.Value)) < 2 {
		t.Errorf("the chart's duration line has points %q, want one per completed checkpoint (at least 2)", points.Value)
	}

	// Create a savepoint with the button, change the view, and roll back
	// through the confirmation.
	do("creating a savepoint",
		chromedp.Navigate(base+"/savepoints"),
		chromedp.SendKeys(chromedp.CSS("#savepoint-name"), "before_more"),
		chromedp.Click(chromedp.CSS("#create-savepoint")),
		chromedp.WaitVisible(chromedp.CSS("#flash")))
	if flash := text("#flash"); !strings.Contains(flash, "before_more") || !slices.Contains(savepoints(t, conn), "before_more") {
		t.Fatalf("after clicking Savepoint: flash %q, SHOW SAVEPOINTS %v; want before_more", flash, savepoints(t, conn))
	}
	// Input stays in JetStream and replays after a rollback: pausing the
	// sources lets the test see the view as the savepoint holds it.
	testutil.MustExec(t, conn, "INSERT INTO clicks VALUES ('home', 1)", "FLUSH", "ALTER SYSTEM PAUSE")
	if got := homeClicks(t, conn); got != 3 {
		t.Fatalf("home clicks %d before rollback, want 3", got)
	}
	do("asking to roll back",
		chromedp.Navigate(base+"/savepoints"),
		chromedp.Click(chromedp.CSS("#savepoints button.rollback")),
		chromedp.WaitVisible(chromedp.CSS("#confirm")))
	if got := homeClicks(t, conn); got != 3 {
		t.Fatalf("home clicks %d after the first click, want 3: rolling back must wait for the confirmation", got)
	}
	do("confirming the rollback",
		chromedp.Click(chromedp.CSS("#confirm-rollback")),
		chromedp.WaitVisible(chromedp.CSS("#flash")))
	screenshot("console-savepoints.png")
	if flash := text("#flash"); !strings.Contains(flash, "Rolled back") {
		t.Errorf("flash %q after confirming, want Rolled back", flash)
	}
	conn = srv.Conn(t) // ROLLBACK TO SAVEPOINT may end other sessions
	if got := homeClicks(t, conn); got != 2 {
		t.Errorf("home clicks %d after rolling back to before_more, want 2", got)
	}
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	if got := homeClicks(t, conn); got != 3 {
		t.Errorf("home clicks %d once the replay after the rollback is done, want 3", got)
	}
}

// TestConsolePassword: with a password set, the console and /metrics ask
// every request to log in as a user of the PostgreSQL port (a created
// user too); the probes stay open.
func TestConsolePassword(t *testing.T) {
	t.Setenv("PGPASSWORD", "console-pw") // for StartServer's readiness probe
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_PASSWORD=console-pw"}})
	testutil.MustExec(t, srv.Conn(t), "CREATE USER watcher PASSWORD 'watch-pw'")
	getPath := func(path, user, password string) int {
		req, err := http.NewRequest("GET", srv.HTTPURL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/checkpoints", "/metrics"} {
		for _, c := range []struct {
			user, password string
			want           int
		}{{"", "", 401}, {"streamdb", "wrong", 401}, {"nobody", "console-pw", 401}, {"streamdb", "console-pw", 200}, {"watcher", "watch-pw", 200}} {
			if got := getPath(path, c.user, c.password); got != c.want {
				t.Errorf("GET %s as %q/%q: %d, want %d", path, c.user, c.password, got, c.want)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if got := getPath(path, "", ""); got != 200 {
			t.Errorf("GET %s without a login: %d, want 200", path, got)
		}
	}
	// A form posted without the page's token is refused.
	req, _ := http.NewRequest("POST", srv.HTTPURL()+"/savepoints", strings.NewReader("action=create&name=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("streamdb", "console-pw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("POST without the form token: %d, want 403", resp.StatusCode)
	}

	// The query page runs as the logged-in user, with that user's
	// privileges, and changes nothing: not even a sequence.
	testutil.MustExec(t, srv.Conn(t), "CREATE TABLE secret (k int PRIMARY KEY)", "INSERT INTO secret VALUES (7)",
		"CREATE SEQUENCE ids")
	for _, c := range []struct{ user, password, sql, want string }{
		{"watcher", "watch-pw", "SELECT current_user", "<td>watcher</td>"},
		{"watcher", "watch-pw", "SELECT k FROM secret", "permission denied for table secret"},
		{"streamdb", "console-pw", "SELECT k FROM secret", "<td>7</td>"},
		{"streamdb", "console-pw", "SELECT nextval('ids')", "cannot execute nextval() in a read-only transaction"},
		{"streamdb", "console-pw", "SELECT set_config('default_transaction_read_only', 'off', false), setval('ids', 9)",
			"cannot execute setval() in a read-only transaction"},
	} {
		if body := postQuery(t, srv.HTTPURL(), c.user, c.password, c.sql); !strings.Contains(body, c.want) {
			t.Errorf("query page as %s, %s: the page does not say %q; it says %q", c.user, c.sql, c.want, answer(body))
		}
	}
	if got := testutil.Scalar(t, srv.Conn(t), "SELECT nextval('ids')"); got != "1" {
		t.Errorf("the first nextval after the query page's is %s, want 1: the page drew from the sequence", got)
	}
}

// answer is the query page's error box or result table.
func answer(page string) string {
	if m := regexp.MustCompile(`(?s)<div class="error" id="error">(.*?)</div>|<div id="result">(.*?)</div>`).FindStringSubmatch(page); m != nil {
		return m[1] + m[2]
	}
	return "(neither an error nor a result)"
}

// postQuery runs sql on the query page as user and returns the page: it
// takes the form's token from the page as a browser would.
func postQuery(t *testing.T, base, user, password, sql string) string {
	t.Helper()
	get := func(req *http.Request) string {
		t.Helper()
		req.SetBasicAuth(user, password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s as %s: %d %s (%v)", req.Method, req.URL, user, resp.StatusCode, body, err)
		}
		return string(body)
	}
	req, _ := http.NewRequest("GET", base+"/query", nil)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(get(req))
	if m == nil {
		t.Fatalf("the query page as %s has no form token", user)
	}
	form := url.Values{"csrf": {m[1]}, "sql": {sql}}
	req, _ = http.NewRequest("POST", base+"/query", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	return html.UnescapeString(get(req))
}

func countCheckpoints(t *testing.T, conn *pgx.Conn) int {
	_, rows, err := testutil.QueryText(conn, 30*time.Second, "SELECT status FROM streamdb_checkpoints", "NULL")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r[0] == "completed" {
			n++
		}
	}
	return n
}

func savepoints(t *testing.T, conn *pgx.Conn) []string {
	_, rows, err := testutil.QueryText(conn, 30*time.Second, "SHOW SAVEPOINTS", "NULL")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r[0])
	}
	return names
}

func homeClicks(t *testing.T, conn *pgx.Conn) int {
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT n FROM page_clicks WHERE page = 'home'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
