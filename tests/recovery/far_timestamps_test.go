package recovery

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestFarTimestampsSurviveKill: views holding timestamps at both ends of
// PostgreSQL's range, the years 294247 to 294276 included (which
// microseconds since 1970 cannot hold), as group keys, min and max by
// value, window bounds and a stream's watermark, come back whole after
// kill -9 (from a checkpoint, and replayed past it), and keep updating:
// deletes find the stored keys, and a row behind the restored watermark
// is late.
func TestFarTimestampsSurviveKill(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testutil.ServerOptions{ConfigFile: writeConfig(t, "execution.checkpointing.interval=0")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE far (id BIGINT PRIMARY KEY, k INT, at TIMESTAMPTZ)",
		"CREATE STREAM ev (id BIGINT, at TIMESTAMP, WATERMARK FOR at AS at - INTERVAL '1' HOUR) WITH (subject = 'far.ev')",
		"CREATE MATERIALIZED VIEW far_keys AS SELECT at, count(*) AS n FROM far GROUP BY at",
		"CREATE MATERIALIZED VIEW far_ext AS SELECT k, min(at) AS lo, max(at) AS hi, count(*) AS n FROM far GROUP BY k",
		"CREATE MATERIALIZED VIEW ev_days AS SELECT window_start, window_end, count(*) AS n FROM TUMBLE(ev, at, INTERVAL '1' DAY) GROUP BY window_start, window_end",
		"CREATE MATERIALIZED VIEW ev_ext AS SELECT max(at) AS hi, min(at) AS lo, count(*) AS n FROM ev",
		`INSERT INTO far VALUES (1, 1, '294276-12-31 23:59:59.999999+00'), (2, 1, '4714-11-24 00:00:00+00 BC'),
		   (3, 2, '294250-06-15 12:00:00+00'), (4, 2, '294247-01-01 00:00:00+00'), (5, 2, '294250-06-15 12:00:00+00'),
		   (6, 3, '2026-01-01 00:00:00+00')`,
		`INSERT INTO ev VALUES (1, '294276-12-29 10:00:00'), (2, '294276-12-29 11:00:00'), (3, '294276-12-30 05:00:00')`,
		"FLUSH", "CHECKPOINT",
		// After the checkpoint: replayed after the crash.
		"INSERT INTO far VALUES (7, 1, '294276-12-31 00:00:00+00'), (8, 3, '294276-12-30 00:00:00+00')",
		"INSERT INTO ev VALUES (4, '294276-12-30 06:00:00')",
		"FLUSH")
	want := map[string][]string{
		"SELECT at, n FROM far_keys ORDER BY at": {
			"4714-11-24 00:00:00+00 BC 1", "2026-01-01 00:00:00+00 1", "294247-01-01 00:00:00+00 1", "294250-06-15 12:00:00+00 2",
			"294276-12-30 00:00:00+00 1", "294276-12-31 00:00:00+00 1", "294276-12-31 23:59:59.999999+00 1"},
		"SELECT k, lo, hi, n FROM far_ext ORDER BY k": {
			"1 4714-11-24 00:00:00+00 BC 294276-12-31 23:59:59.999999+00 3",
			"2 294247-01-01 00:00:00+00 294250-06-15 12:00:00+00 3",
			"3 2026-01-01 00:00:00+00 294276-12-30 00:00:00+00 2"},
		"SELECT window_start, window_end, n FROM ev_days ORDER BY window_start": {
			"294276-12-29 00:00:00 294276-12-30 00:00:00 2", "294276-12-30 00:00:00 294276-12-31 00:00:00 2"},
		"SELECT hi, lo, n FROM ev_ext": {"294276-12-30 06:00:00 294276-12-29 10:00:00 4"},
		"SELECT watermark, late_rows FROM streamdb_watermarks WHERE view = 'ev_days'": {"294276-12-30 05:00:00 0"},
	}
	check := func(when string, want map[string][]string) {
		t.Helper()
		for sql, rows := range want {
			if got := farRows(t, conn, sql); strings.Join(got, "\n") != strings.Join(rows, "\n") {
				t.Errorf("%s: %s:\n got: %q\nwant: %q", when, sql, got, rows)
			}
		}
	}
	check("before the crash", want)

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "FLUSH")
	check("after kill -9 and restart", want)

	// The restored state keeps updating: deletes retract the stored keys
	// and extremes, a row behind the restored watermark is late, a later
	// one counts.
	testutil.MustExec(t, conn,
		"DELETE FROM far WHERE id IN (1, 5)",
		"INSERT INTO ev VALUES (5, '294276-12-29 12:00:00'), (6, '294276-12-30 07:00:00')",
		"FLUSH")
	want["SELECT at, n FROM far_keys ORDER BY at"] = []string{
		"4714-11-24 00:00:00+00 BC 1", "2026-01-01 00:00:00+00 1", "294247-01-01 00:00:00+00 1", "294250-06-15 12:00:00+00 1",
		"294276-12-30 00:00:00+00 1", "294276-12-31 00:00:00+00 1"}
	want["SELECT k, lo, hi, n FROM far_ext ORDER BY k"] = []string{
		"1 4714-11-24 00:00:00+00 BC 294276-12-31 00:00:00+00 2",
		"2 294247-01-01 00:00:00+00 294250-06-15 12:00:00+00 2",
		"3 2026-01-01 00:00:00+00 294276-12-30 00:00:00+00 2"}
	want["SELECT window_start, window_end, n FROM ev_days ORDER BY window_start"] = []string{
		"294276-12-29 00:00:00 294276-12-30 00:00:00 2", "294276-12-30 00:00:00 294276-12-31 00:00:00 3"}
	want["SELECT hi, lo, n FROM ev_ext"] = []string{"294276-12-30 07:00:00 294276-12-29 10:00:00 5"}
	want["SELECT watermark, late_rows FROM streamdb_watermarks WHERE view = 'ev_days'"] = []string{"294276-12-30 06:00:00 1"}
	check("after more changes", want)
}

// farRows returns a query's rows, each row's values joined by spaces.
func farRows(t testing.TB, conn *pgx.Conn, sql string) []string {
	t.Helper()
	_, rows := mustQuery(t, conn, sql)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, " ")
	}
	return out
}
