package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestExplainUsesIndex: a SELECT whose WHERE fixes or bounds an indexed
// column reads through the index (EXPLAIN shows "Index Scan using ..."),
// with the answers of a scan; the primary key, a condition the index
// cannot serve, and a dropped index do not. A statement prepared before
// DROP INDEX (pgx caches it, extended protocol) still answers right.
func TestExplainUsesIndex(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE ex_t (k bigint PRIMARY KEY, v int, s text)",
		"INSERT INTO ex_t SELECT g, g % 97, 's' || g FROM generate_series(1, 5000) g",
		"CREATE INDEX ex_t_v ON ex_t (v)",
		"CREATE MATERIALIZED VIEW ex_mv AS SELECT v, count(*) AS n, max(k) AS top FROM ex_t GROUP BY v",
		"CREATE INDEX ex_mv_top ON ex_mv (top)")
	flush(t, conn)
	plan := func(q string) string { return strings.Join(textRows(t, conn, "EXPLAIN "+q), "\n") }
	for _, c := range []struct {
		q, want string
	}{
		{"SELECT * FROM ex_t WHERE v = 7", "Index Scan using ex_t_v on table ex_t"},
		{"SELECT * FROM ex_t WHERE v IN (1, 2, 3)", "Index Scan using ex_t_v on table ex_t"},
		{"SELECT * FROM ex_t WHERE v BETWEEN 10 AND 12", "Index Scan using ex_t_v on table ex_t"},
		{"SELECT count(*) FROM ex_t WHERE v > 90 AND s LIKE 's1%'", "Index Scan using ex_t_v on table ex_t"},
		{"SELECT * FROM ex_mv WHERE top = 4999", "Index Scan using ex_mv_top on materialized view ex_mv"},
		{"SELECT * FROM ex_t WHERE k = 7", "Scan table ex_t"},
		{"SELECT * FROM ex_t WHERE v + 0 = 7", "Scan table ex_t"},
		{"SELECT * FROM ex_t WHERE v = 7 OR s = 's9'", "Scan table ex_t"},
	} {
		got := plan(c.q)
		if !strings.Contains(got, c.want) || (strings.HasPrefix(c.want, "Scan") && strings.Contains(got, "Index Scan")) {
			t.Errorf("EXPLAIN %s:\n%s\nwant a line %q", c.q, got, c.want)
		}
	}
	// Through the index and by a scan (v + 0 cannot use it): the same rows.
	same := func(where string) {
		t.Helper()
		scan := strings.ReplaceAll(where, "v ", "v + 0 ")
		a := textRows(t, conn, "SELECT k, v, s FROM ex_t WHERE "+where+" ORDER BY k")
		b := textRows(t, conn, "SELECT k, v, s FROM ex_t WHERE "+scan+" ORDER BY k")
		if !slices.Equal(a, b) || len(a) == 0 {
			t.Errorf("WHERE %s: %d rows through the index, %d by a scan (%q)", where, len(a), len(b), scan)
		}
	}
	same("v = 7")
	same("v IN (3, 96, 1000)")
	same("v BETWEEN 10 AND 12")
	same("v > 94")
	same("v < 2")
	exec(t, conn, "UPDATE ex_t SET v = 7 WHERE v = 8", "DELETE FROM ex_t WHERE v = 9 AND k < 2000")
	same("v = 7")
	same("v BETWEEN 6 AND 9")
	wantRows(t, conn, "SELECT count(*) FROM ex_t WHERE v = 8", "0")

	// Prepared (extended protocol, cached by pgx) before DROP INDEX and
	// run after it, and before a CREATE INDEX and run after.
	ctx := testutil.Context(t, 30*time.Second)
	count := func(q string, arg any) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, q, arg).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	const byV = "SELECT count(*) FROM ex_t WHERE v = $1"
	const byS = "SELECT count(*) FROM ex_t WHERE s = $1"
	want := count(byV, 7)
	if n := count(byS, "s77"); n != 1 {
		t.Fatalf("%s: %d rows, want 1", byS, n)
	}
	exec(t, conn, "DROP INDEX ex_t_v", "CREATE INDEX ex_t_s ON ex_t (s)", "CREATE INDEX ex_t_v2 ON ex_t (s, v)")
	if n := count(byV, 7); n != want {
		t.Errorf("%s after DROP INDEX: %d rows, want %d", byV, n, want)
	}
	if n := count(byS, "s77"); n != 1 {
		t.Errorf("%s after CREATE INDEX: %d rows, want 1", byS, n)
	}
	if got := plan("SELECT * FROM ex_t WHERE v = 7"); strings.Contains(got, "Index Scan") {
		t.Errorf("a dropped index is still used:\n%s", got)
	}
	if got := plan("SELECT * FROM ex_t WHERE s = 'x'"); !strings.Contains(got, "Index Scan using ex_t_s on") {
		t.Errorf("EXPLAIN with ex_t_s (s) and ex_t_v2 (s, v): want ex_t_s, the narrower:\n%s", got)
	}
	// UPDATE and DELETE prepared before the index they read through is
	// dropped.
	upd := "UPDATE ex_t SET v = v + 1000 WHERE s = $1"
	if _, err := conn.Exec(ctx, upd, "s100"); err != nil {
		t.Fatal(err)
	}
	exec(t, conn, "DROP INDEX ex_t_s, ex_t_v2")
	tag, err := conn.Exec(ctx, upd, "s101")
	if err != nil || tag.RowsAffected() != 1 {
		t.Errorf("%s after DROP INDEX: %v rows, err %v; want 1", upd, tag.RowsAffected(), err)
	}
	wantRows(t, conn, "SELECT k FROM ex_t WHERE v >= 1000 ORDER BY k", "100", "101")
}
