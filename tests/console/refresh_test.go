package console

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"streamdb/tests/testutil"
)

// TestConsoleAutoRefresh checks that the overview updates itself in
// Chromium: a view created after the page loaded shows up without a
// reload (a value set on the page's window survives), and ?refresh=0
// stops the updates.
func TestConsoleAutoRefresh(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "CREATE STREAM ticks (n int) WITH (subject = 'ticks')")
	pg := newPage(t)
	tab := pg.tab
	base := srv.HTTPURL()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) { t.Helper(); pg.do(t, what, steps...) }
	text := pg.text

	run("opening the overview", chromedp.Navigate(base+"/"))
	if got, err := text("#refresh"); err != nil || !strings.Contains(got, "Updates every 5 s") {
		t.Fatalf("overview's refresh line %q (%v), want it to say it updates every 5 s", got, err)
	}
	run("marking the page", chromedp.Evaluate[chromedp.Void]("window.loadedOnce = true"))
	testutil.MustExec(t, conn, "CREATE MATERIALIZED VIEW tick_total AS SELECT count(*) AS n FROM ticks")
	testutil.Poll(t, 30*time.Second, "the overview to list tick_total", func() error {
		views, err := text("#views")
		if err != nil {
			return err
		}
		if !strings.Contains(views, "tick_total") {
			return fmt.Errorf("the overview lists views %q, not yet tick_total", views)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.loadedOnce === true"))
	cancel()
	if err != nil || !same {
		t.Errorf("the page was reloaded to update (marker kept: %v, %v); it should swap its content in place", same, err)
	}

	run("opening the overview without updates", chromedp.Navigate(base+"/?refresh=0"))
	if got, err := text("#refresh"); err != nil || !strings.Contains(got, "Not updating") {
		t.Errorf("with ?refresh=0 the refresh line is %q (%v), want it to say it is not updating", got, err)
	}
	ctx, cancel = context.WithTimeout(tab, 10*time.Second)
	live, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("main[data-refresh]") !== null`))
	cancel()
	if err != nil || live {
		t.Errorf("with ?refresh=0 the page still updates itself (%v)", err)
	}
}
