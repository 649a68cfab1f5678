package e2e

import (
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestViewSkipsFailedRowEveryOperator: a row whose evaluation fails in a
// watermark definition, a window (TUMBLE/HOP bounds past the timestamp
// range, an infinite event time), a top-N's partition or ordering, or a
// join's key or condition is skipped where it fails and recorded, like one
// that fails in a projection: the view goes on and keeps no trace of it,
// streamdb_view_errors names the operator and the SQLSTATE. A view WITH
// (on_error = 'fail') stops at the same row instead.
func TestViewSkipsFailedRowEveryOperator(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM ev (id BIGINT, n INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND * (10 / n))",
		"CREATE STREAM plain (id BIGINT, n INT, ts TIMESTAMP)",
		"CREATE STREAM other (id BIGINT, m INT)",
		// The watermark expression fails for n = 0.
		"CREATE MATERIALIZED VIEW wm AS SELECT id FROM ev",
		"CREATE MATERIALIZED VIEW wm_fail WITH (on_error = 'fail') AS SELECT id FROM ev",
		// Windows: an infinite time, or a window ending past 294276 AD.
		"CREATE MATERIALIZED VIEW tumbled AS SELECT window_start, count(*) AS c FROM TUMBLE(plain, ts, INTERVAL '1' DAY) GROUP BY window_start",
		"CREATE MATERIALIZED VIEW hopped AS SELECT id, window_start FROM HOP(plain, ts, INTERVAL '1' DAY, INTERVAL '2' DAY)",
		// Top-N: the partition fails for n = 0, the ordering for n = 1.
		`CREATE MATERIALIZED VIEW top AS SELECT id, rn FROM (
		   SELECT id, row_number() OVER (PARTITION BY 10 / n ORDER BY 5 / (n - 1), id) AS rn FROM plain) x WHERE rn <= 10`,
		// Joins: the key fails for n = 0, the condition for m = 0.
		"CREATE MATERIALIZED VIEW joined AS SELECT p.id, o.m FROM plain p JOIN other o ON p.id / p.n = o.id AND p.id / o.m >= 0",
	)
	_, js := testutil.JetStream(t, srv.NATSURL())
	testutil.Publish(t, js, "ev",
		`{"id": 1, "n": 5, "ts": "2026-01-01 00:00:00"}`,
		`{"id": 2, "n": 0, "ts": "2026-01-01 00:00:01"}`,
		`{"id": 3, "n": 2, "ts": "2026-01-01 00:00:02"}`)
	testutil.Publish(t, js, "plain",
		`{"id": 1, "n": 2, "ts": "2026-01-01 10:00:00"}`,
		`{"id": 2, "n": 0, "ts": "2026-01-01 11:00:00"}`,
		`{"id": 3, "n": 1, "ts": "2026-01-02 10:00:00"}`,
		`{"id": 4, "n": 2, "ts": "infinity"}`,
		`{"id": 5, "n": 2, "ts": "294276-12-31 12:00:00"}`,
		`{"id": 6, "n": 2, "ts": "2026-01-01 12:00:00"}`)
	testutil.Publish(t, js, "other",
		`{"id": 0, "m": 1}`, `{"id": 1, "m": 0}`, `{"id": 2, "m": 3}`, `{"id": 3, "m": 1}`)
	exec(t, conn, "FLUSH")

	wantRows(t, conn, "SELECT id FROM wm ORDER BY id", "1", "3")
	wantRows(t, conn, "SELECT window_start, c FROM tumbled ORDER BY window_start",
		"2026-01-01 00:00:00 3", "2026-01-02 00:00:00 1")
	wantRows(t, conn, "SELECT id, window_start FROM hopped ORDER BY id, window_start",
		"1 2025-12-31 00:00:00", "1 2026-01-01 00:00:00", "2 2025-12-31 00:00:00", "2 2026-01-01 00:00:00",
		"3 2026-01-01 00:00:00", "3 2026-01-02 00:00:00", "6 2025-12-31 00:00:00", "6 2026-01-01 00:00:00")
	wantRows(t, conn, "SELECT id, rn FROM top ORDER BY id", "1 1", "4 2", "5 3", "6 4")
	// id/n = o.id: 1/2 = 0 (m 1, condition holds), 3/1 = 3 (m 1), 4/2 = 2
	// (m 3), 5/2 = 2 (m 3), 6/2 = 3 (m 1); id 2 fails in the key.
	wantRows(t, conn, "SELECT id, m FROM joined ORDER BY id", "1 1", "3 1", "4 3", "5 3", "6 1")
	wantRows(t, conn, `SELECT view, operator, sqlstate, error FROM streamdb_view_errors
	                   WHERE view IN ('wm', 'tumbled', 'hopped', 'top', 'joined') ORDER BY view, at`,
		"hopped window 22008 timestamp out of range: an infinite event time is in no window",
		"hopped window 22008 timestamp out of range: a window of 294276-12-31 12:00:00 starts or ends outside the timestamp range",
		"joined join 22012 division by zero",
		"top top-n 22012 division by zero",
		"top top-n 22012 division by zero",
		"tumbled window 22008 timestamp out of range: an infinite event time is in no window",
		"tumbled window 22008 timestamp out of range: a window of 294276-12-31 12:00:00 starts or ends outside the timestamp range",
		"wm watermark 22012 division by zero",
	)

	// A pair whose condition fails does not match; the other side's row
	// still joins with the rest.
	testutil.Publish(t, js, "other", `{"id": 0, "m": 0}`)
	exec(t, conn, "FLUSH")
	wantRows(t, conn, "SELECT id, m FROM joined ORDER BY id", "1 1", "3 1", "4 3", "5 3", "6 1")
	wantRows(t, conn, "SELECT operator, sqlstate FROM streamdb_view_errors WHERE view = 'joined' ORDER BY at",
		"join 22012", "join condition 22012")

	_, err := textRowsErr(testutil.Context(t, 30*time.Second), conn, "SELECT * FROM wm_fail")
	if pe := wantCode(t, err, "22012"); pe != nil && !strings.Contains(pe.Detail, "watermark") {
		t.Errorf("detail %q does not name the watermark", pe.Detail)
	}
	wantRows(t, conn, "SELECT operator, sqlstate FROM streamdb_view_errors WHERE view = 'wm_fail'", "watermark 22012")
	wantExecCode(t, conn, "CREATE MATERIALIZED VIEW huge AS SELECT count(*) AS c FROM TUMBLE(plain, ts, INTERVAL '200000000 days') GROUP BY window_start", "22023")
}
