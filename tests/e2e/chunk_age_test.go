package e2e

import (
	"fmt"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestReaderSendsAgedRows: a source reader hands rows to its views once
// they have waited a few milliseconds, not only when a chunk is full or at
// the next barrier, so that views fold an epoch's rows while it lasts.
// With barriers an hour apart, events published one per millisecond reach
// the view's dataflow (streamdb_view_rows_in_total) long before any
// barrier; the view still shows them only once an epoch commits.
func TestReaderSendsAgedRows(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE STREAM aged (k int) WITH (subject = 'aged.ev')")
	exec(t, conn, "CREATE MATERIALIZED VIEW aged_n AS SELECT count(*) AS n FROM aged")
	exec(t, conn, "SET execution.barrier.interval = '1h'")
	_, js := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, time.Minute)
	const events = 400
	for i := range events {
		if _, err := js.Publish(ctx, "aged.ev", fmt.Appendf(nil, `{"k": %d}`, i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	// Every 16th message looks at the chunk's age: all but the last few
	// rows go out without a barrier.
	poll(t, 30*time.Second, func() error {
		if n := metricValue(t, srv.Metrics(t), "streamdb_view_rows_in_total", "view", "aged_n"); n < events*3/4 {
			return fmt.Errorf("%v of %d rows reached the view's dataflow", n, events)
		}
		return nil
	})
	exec(t, conn, "SET execution.barrier.interval = '20ms'")
	flush(t, conn)
	wantRows(t, conn, "SELECT n FROM aged_n", fmt.Sprint(events))
}
