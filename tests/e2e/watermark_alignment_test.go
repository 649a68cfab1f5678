package e2e

import (
	"fmt"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestWatermarkAlignmentInCatchUp: a view joins a sparse watermarked
// stream (one event per second of event time) with a dense one (ten per
// second) over a backlog published before the view. Reading both by
// message count would put the sparse reader minutes ahead; aligned, it
// waits for the dense one (streamdb_source_alignment_wait_seconds_total
// counts the wait) and the view's result is exact. The setting is a
// server setting with a duration value.
func TestWatermarkAlignmentInCatchUp(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	wantRows(t, conn, "SHOW scan.watermark.alignment.max-drift", "10s")
	_, err := conn.Exec(testutil.Context(t, 10*time.Second), "ALTER SYSTEM SET scan.watermark.alignment.max-drift = 'soon'")
	wantCode(t, err, "22023")
	exec(t, conn,
		"CREATE STREAM sparse (k INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (subject = 'align.sparse')",
		"CREATE STREAM dense (k INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (subject = 'align.dense')")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := func(d time.Duration) string { return start.Add(d).Format("2006-01-02 15:04:05.000") }
	const seconds = 300
	var sparse, dense []string
	for i := range seconds {
		sparse = append(sparse, fmt.Sprintf(`{"k": %d, "ts": %q}`, i, ts(time.Duration(i)*time.Second)))
	}
	for i := range 10 * seconds {
		dense = append(dense, fmt.Sprintf(`{"k": %d, "ts": %q}`, i/10, ts(time.Duration(i)*100*time.Millisecond)))
	}
	_, js := testutil.JetStream(t, srv.NATSURL())
	testutil.Publish(t, js, "align.sparse", sparse...)
	testutil.Publish(t, js, "align.dense", dense...)
	// Every dense event of second k falls in [k s, k s + 1 s) and so
	// matches sparse event k.
	exec(t, conn, `CREATE MATERIALIZED VIEW matched AS
		SELECT count(*) AS n FROM sparse s JOIN dense d
		ON s.k = d.k AND d.ts BETWEEN s.ts AND s.ts + INTERVAL '1' SECOND`)
	flush(t, conn)
	wantRows(t, conn, "SELECT n FROM matched", fmt.Sprint(10*seconds))
	waited := metricValue(t, srv.Metrics(t), "streamdb_source_alignment_wait_seconds_total", "stream", "sparse")
	if waited <= 0 {
		t.Fatalf("the sparse stream's reader never waited for the dense one: streamdb_source_alignment_wait_seconds_total{stream=\"sparse\"} = %v", waited)
	}
}
