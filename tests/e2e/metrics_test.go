package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"streamdb/tests/testutil"
)

// scrape reads the server's /metrics.
func scrape(t *testing.T, srv *testutil.Server) map[string]*dto.MetricFamily {
	t.Helper()
	return srv.Metrics(t)
}

func httpGet(t *testing.T, url string, wantStatus int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != wantStatus {
		t.Fatalf("GET %s: status %d, want %d: %s", url, resp.StatusCode, wantStatus, body)
	}
	return string(body)
}

// metricValue is testutil.MetricValue.
func metricValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	return testutil.MetricValue(t, fams, name, labels...)
}

func hasLabels(m *dto.Metric, pairs []string) bool { return testutil.HasLabels(m, pairs) }

// TestMetricsAgreeWithSQL scrapes /metrics while the server works and
// checks the counters against what SQL reports: completed checkpoints
// against SHOW CHECKPOINTS, epochs against the epochs checkpoints name,
// connections and failed statements against what the test did.
func TestMetricsAgreeWithSQL(t *testing.T) {
	t.Parallel()
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{
		"STREAMDB_EXECUTION_CHECKPOINTING_INTERVAL=0", // only the checkpoints this test takes
		"STREAMDB_STATE_CHECKPOINTS_NUM_RETAINED=100", // so SHOW CHECKPOINTS lists them all
	}})
	if got := httpGet(t, srv.HTTPURL()+"/healthz", http.StatusOK); strings.TrimSpace(got) != "ok" {
		t.Fatalf("/healthz: %q", got)
	}
	if got := httpGet(t, srv.HTTPURL()+"/readyz", http.StatusOK); strings.TrimSpace(got) != "ready" {
		t.Fatalf("/readyz: %q", got)
	}

	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM ev (k int, v bigint) WITH (subject = 'metrics.ev')",
		"CREATE MATERIALIZED VIEW per_k AS SELECT k, sum(v) AS total FROM ev GROUP BY k")
	nc, js := testutil.JetStream(t, srv.NATSURL())
	defer nc.Close()
	publishMany(t, js, "metrics.ev", 500, func(i int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, i%7, i) })
	poll(t, 60*time.Second, func() error {
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT sum(total) FROM per_k").Scan(&n); err != nil {
			return err
		}
		if n != 499*500/2 {
			return fmt.Errorf("sum %d so far", n)
		}
		return nil
	})
	for i := 0; i < 3; i++ {
		exec(t, conn, "CHECKPOINT")
	}
	// Two statements that fail, with SQLSTATE classes 42 and 22.
	for _, q := range []string{"SELECT nosuch FROM per_k", "SELECT 1/0"} {
		if _, err := conn.Exec(context.Background(), q); err == nil {
			t.Fatalf("%s succeeded", q)
		}
	}

	var completed int
	var newestEpoch int64
	rows, err := conn.Query(context.Background(), "SELECT status, epoch FROM streamdb_checkpoints")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var status string
		var epoch int64
		if err := rows.Scan(&status, &epoch); err != nil {
			t.Fatal(err)
		}
		if status == "completed" {
			completed++
			newestEpoch = max(newestEpoch, epoch)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if completed < 5 { // two DDL checkpoints and three CHECKPOINTs
		t.Fatalf("SHOW CHECKPOINTS lists %d completed checkpoints, want at least 5", completed)
	}

	fams := scrape(t, srv)
	if got := metricValue(t, fams, "streamdb_checkpoints_completed_total"); got != float64(completed) {
		t.Errorf("streamdb_checkpoints_completed_total = %v, SHOW CHECKPOINTS lists %d completed", got, completed)
	}
	if got := metricValue(t, fams, "streamdb_checkpoint_duration_seconds"); got != float64(completed) {
		t.Errorf("streamdb_checkpoint_duration_seconds has %v samples, want %d", got, completed)
	}
	if got := metricValue(t, fams, "streamdb_checkpoints_failed_total"); got != 0 {
		t.Errorf("streamdb_checkpoints_failed_total = %v, want 0", got)
	}
	// Every epoch up to the newest checkpoint's committed once; epochs
	// keep committing meanwhile, so the counter may be ahead.
	if got := metricValue(t, fams, "streamdb_epochs_committed_total"); got < float64(newestEpoch) {
		t.Errorf("streamdb_epochs_committed_total = %v, below epoch %d of the newest checkpoint", got, newestEpoch)
	}
	if got := metricValue(t, fams, "streamdb_connections"); got != 1 {
		t.Errorf("streamdb_connections = %v with one client connected", got)
	}
	for _, class := range []string{"42", "22"} {
		if got := metricValue(t, fams, "streamdb_queries_total", "outcome", class); got != 1 {
			t.Errorf("streamdb_queries_total{outcome=%q} = %v, want 1", class, got)
		}
	}
	// Every event reached the view's dataflow; the aggregate sent its
	// groups' changes to the view (at least one insert per key).
	if got := metricValue(t, fams, "streamdb_view_rows_in_total", "view", "per_k"); got != 500 {
		t.Errorf("streamdb_view_rows_in_total{view=per_k} = %v, 500 events were published", got)
	}
	if got := metricValue(t, fams, "streamdb_view_rows_out_total", "view", "per_k"); got < 7 {
		t.Errorf("streamdb_view_rows_out_total{view=per_k} = %v, want at least one insert for each of 7 keys", got)
	}
	if got := metricValue(t, fams, "streamdb_pebble_disk_usage_bytes"); got <= 0 {
		t.Errorf("streamdb_pebble_disk_usage_bytes = %v", got)
	}

	// A second connection shows, and its close is counted.
	c2 := srv.Conn(t)
	if got := metricValue(t, scrape(t, srv), "streamdb_connections"); got != 2 {
		t.Errorf("streamdb_connections = %v with two clients connected", got)
	}
	c2.Close(context.Background())
	poll(t, 30*time.Second, func() error {
		if got := metricValue(t, scrape(t, srv), "streamdb_connections"); got != 1 {
			return fmt.Errorf("streamdb_connections = %v after one of two clients closed", got)
		}
		return nil
	})
}

// TestMetricsLagAndFreshness: while the views are paused, events published
// show as each view's lag in messages and as a freshness age; once resumed
// and caught up, both are 0.
func TestMetricsLagAndFreshness(t *testing.T) {
	t.Parallel()
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM lag_ev (k int) WITH (subject = 'metrics.lag')",
		"CREATE MATERIALIZED VIEW lag_n AS SELECT count(*) AS n FROM lag_ev",
		"ALTER SYSTEM PAUSE")
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishMany(t, js, "metrics.lag", 120, func(i int) string { return fmt.Sprintf(`{"k": %d}`, i) })
	fams := scrape(t, srv)
	if got := metricValue(t, fams, "streamdb_source_lag_messages", "view", "lag_n", "stream", "lag_ev"); got != 120 {
		t.Errorf("paused: streamdb_source_lag_messages{view=lag_n} = %v, want 120", got)
	}
	if got := metricValue(t, fams, "streamdb_view_freshness_seconds", "view", "lag_n"); got <= 0 {
		t.Errorf("paused with 120 unread events: streamdb_view_freshness_seconds{view=lag_n} = %v, want > 0", got)
	}
	exec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	wantRows(t, conn, "SELECT n FROM lag_n", "120")
	poll(t, 30*time.Second, func() error {
		fams := scrape(t, srv)
		lag := metricValue(t, fams, "streamdb_source_lag_messages", "view", "lag_n", "stream", "lag_ev")
		fresh := metricValue(t, fams, "streamdb_view_freshness_seconds", "view", "lag_n")
		if lag != 0 || fresh != 0 {
			return fmt.Errorf("caught up, yet lag %v and freshness %v", lag, fresh)
		}
		return nil
	})
}
