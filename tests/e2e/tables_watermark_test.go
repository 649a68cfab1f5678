package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestTableAndWatermarkSurviveCrash checks what a table and a watermark
// keep across kill -9: the table's rows and primary key (a duplicate is
// still refused, an UPDATE still finds its row), views over the table, and
// a stream's watermark (rows late before the crash stay late after it, so
// closed windows never reopen).
func TestTableAndWatermarkSurviveCrash(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE accounts (id INT PRIMARY KEY, owner TEXT NOT NULL, balance BIGINT)",
		"CREATE MATERIALIZED VIEW per_owner AS SELECT owner, count(*) AS n, sum(balance) AS total FROM accounts GROUP BY owner",
		"CREATE STREAM ticks (k TEXT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)",
		"CREATE MATERIALIZED VIEW per_window AS SELECT k, window_start, count(*) AS n FROM TUMBLE(ticks, ts, INTERVAL '10' SECOND) GROUP BY k, window_start",
		"INSERT INTO accounts VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'ann', 30)",
		"UPDATE accounts SET balance = balance * 2 WHERE owner = 'ann'",
		"DELETE FROM accounts WHERE id = 2",
		"INSERT INTO ticks VALUES ('a', '2026-01-01 00:00:01'), ('a', '2026-01-01 00:00:15')",
		"INSERT INTO ticks VALUES ('a', '2026-01-01 00:00:05')", // late: watermark is 00:00:13
		"FLUSH")
	wantOwners := []string{"ann 2 80"}
	wantWindows := []string{"a 2026-01-01 00:00:00 1", "a 2026-01-01 00:00:10 1"}
	check := func(when string) {
		t.Helper()
		checkRows(t, conn, when, "SELECT owner, n, total FROM per_owner ORDER BY owner", wantOwners)
		checkRows(t, conn, when, "SELECT k, window_start, n FROM per_window ORDER BY window_start", wantWindows)
		checkRows(t, conn, when, "SELECT late_rows FROM streamdb_watermarks WHERE view = 'per_window'", []string{"1"})
	}
	check("before the crash")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	flush(t, conn)
	check("after kill -9 and restart")

	if _, err := conn.Exec(t.Context(), "INSERT INTO accounts VALUES (1, 'dup', 0)"); err == nil || !strings.Contains(err.Error(), "23505") {
		t.Fatalf("duplicate key after restart: got %v, want SQLSTATE 23505", err)
	}
	exec(t, conn,
		"UPDATE accounts SET owner = 'bob' WHERE id = 3",
		"INSERT INTO ticks VALUES ('a', '2026-01-01 00:00:09')", // still late
		"INSERT INTO ticks VALUES ('a', '2026-01-01 00:00:14')", // on time
		"FLUSH")
	wantOwners = []string{"ann 1 20", "bob 1 60"}
	wantWindows = []string{"a 2026-01-01 00:00:00 1", "a 2026-01-01 00:00:10 2"}
	checkRows(t, conn, "after the restart", "SELECT owner, n, total FROM per_owner ORDER BY owner", wantOwners)
	checkRows(t, conn, "after the restart", "SELECT k, window_start, n FROM per_window ORDER BY window_start", wantWindows)
	checkRows(t, conn, "after the restart", "SELECT late_rows FROM streamdb_watermarks WHERE view = 'per_window'", []string{"2"})
	checkRows(t, conn, "after the restart", "SELECT id, owner, balance FROM accounts ORDER BY id", []string{"1 ann 20", "3 bob 60"})

	// The extended protocol: parameters in INSERT, UPDATE and DELETE.
	ctx := testutil.Context(t, 30*time.Second)
	for _, st := range []struct {
		sql  string
		args []any
		tag  string
	}{
		{"INSERT INTO accounts VALUES ($1, $2, $3)", []any{4, "cy", int64(7)}, "INSERT 0 1"},
		{"UPDATE accounts SET balance = balance + $1 WHERE owner = $2", []any{int64(100), "bob"}, "UPDATE 1"},
		{"DELETE FROM accounts WHERE id = $1", []any{1}, "DELETE 1"},
	} {
		tag, err := conn.Exec(ctx, st.sql, st.args...)
		if err != nil || tag.String() != st.tag {
			t.Fatalf("%s %v: tag %q, err %v; want %q", st.sql, st.args, tag, err, st.tag)
		}
	}
	checkRows(t, conn, "after parameterised changes", "SELECT id, owner, balance FROM accounts ORDER BY id", []string{"3 bob 160", "4 cy 7"})
}

// checkRows compares a query's rows, rendered as space-separated text, with
// want.
func checkRows(t *testing.T, conn *pgx.Conn, when, sql string, want []string) {
	t.Helper()
	got := textRows(t, conn, sql)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: %s\ngot  %q\nwant %q", when, sql, got, want)
	}
}
