package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"streamdb/tests/testutil"
)

// TestConsoleFailedRows checks that a view whose rows fail says so on
// every page that shows it, rather than looking healthy and empty: the
// overview counts its failed rows, the pipeline draws its box in red
// with the count, and its page links to the failed rows. The count moves
// as more rows fail, on a page left open.
func TestConsoleFailedRows(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	// The views exist before their first rows: no CREATE can warn.
	testutil.MustExec(t, conn,
		"CREATE STREAM orders (customer_id bigint, qty int) WITH (subject = 'orders')",
		"CREATE MATERIALIZED VIEW per_customer AS SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id",
		"CREATE MATERIALIZED VIEW ratio AS SELECT customer_id, 1/0 AS x FROM orders",
		"INSERT INTO orders VALUES (1, 2), (2, 3), (3, 4)",
		"FLUSH")
	if n := testutil.Scalar(t, conn, "SELECT count(*) FROM ratio"); n != "0" {
		t.Fatalf("ratio has %s rows, want 0: every row divides by zero", n)
	}
	pg := newPage(t)
	base := srv.HTTPURL()
	failedCell := func(view string) string {
		return fmt.Sprintf(`#views tr[data-view=%q] td.failed-rows`, view)
	}

	pg.do(t, "opening the overview", chromedp.Navigate(base+"/?refresh=0"))
	if got := pg.mustText(t, failedCell("ratio")); got != "3" {
		t.Errorf("the overview's failed rows of ratio: %q, want 3", got)
	}
	if got := pg.mustText(t, failedCell("per_customer")); got != "0" {
		t.Errorf("the overview's failed rows of per_customer: %q, want 0", got)
	}

	pg.do(t, "opening the pipeline", chromedp.Navigate(base+"/graph?refresh=0"))
	if got := pg.mustText(t, "#pipeline g.node.failing"); !strings.Contains(got, "3 rows failed") || !strings.HasPrefix(got, "ratio") {
		t.Errorf("the pipeline's failing box says %q, want ratio with 3 rows failed", got)
	}
	if got := pg.mustText(t, `#pipeline g.node[data-name="per_customer"]`); strings.Contains(got, "failed") {
		t.Errorf("per_customer's box says %q: none of its rows failed", got)
	}
	pg.screenshot(t, "console-failed-rows-pipeline.png")

	pg.do(t, "opening the view", chromedp.Navigate(base+"/views/ratio?refresh=0"))
	if got := pg.mustText(t, "#failed-rows"); got != "3 rows failed" {
		t.Errorf("ratio's page says %q, want 3 rows failed", got)
	}
	if got := pg.mustText(t, "#errors"); !strings.Contains(got, "division by zero") {
		t.Errorf("ratio's failed rows %q, want the division by zero", got)
	}

	// Left open, the overview counts the rows that fail later.
	pg.do(t, "opening the overview", chromedp.Navigate(base+"/"))
	testutil.MustExec(t, conn, "INSERT INTO orders VALUES (4, 1), (5, 1)", "FLUSH")
	testutil.Poll(t, 60*time.Second, "the open overview to count 5 failed rows of ratio", func() error {
		got, err := pg.text(failedCell("ratio"))
		if err != nil {
			return err
		}
		if got != "5" {
			return fmt.Errorf("the overview says %q", got)
		}
		return nil
	})
	pg.screenshot(t, "console-failed-rows.png")
}

// TestConsoleStreamFieldMismatch checks that the overview shows a stream
// declared with other names than its producer uses (snake_case columns,
// camelCase fields), whose rows read as NULLs: the fields no column
// matches, with their counts, and the columns no message had.
func TestConsoleStreamFieldMismatch(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE STREAM signups (user_id bigint, plan text) WITH (subject = 'signups')",
		"CREATE MATERIALIZED VIEW plans AS SELECT plan, count(*) AS n FROM signups GROUP BY plan")
	_, js := testutil.JetStream(t, srv.NATSURL())
	testutil.Publish(t, js, "signups", `{"userId": 1, "plan": "pro"}`)
	testutil.Publish(t, js, "signups", `{"userId": 2, "plan": "free"}`)
	testutil.MustExec(t, conn, "FLUSH")
	pg := newPage(t)
	pg.do(t, "opening the overview", chromedp.Navigate(srv.HTTPURL()+"/?refresh=0"))
	row := `#streams tr[data-stream="signups"] `
	if got := pg.mustText(t, row+"td.unmatched-keys"); got != "userId (2)" {
		t.Errorf("the overview's fields of signups no column matches: %q, want userId (2)", got)
	}
	if got := pg.mustText(t, row+"td.never-seen"); got != "user_id" {
		t.Errorf("the overview's columns of signups no message had: %q, want user_id", got)
	}
	pg.screenshot(t, "console-stream-fields.png")
}
