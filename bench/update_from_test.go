package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// BenchmarkUpdateFrom measures UPDATE ... FROM and DELETE ... USING that
// join a table of N rows (k BIGINT PRIMARY KEY, v BIGINT) with a list
// table of N rows by an equality (issue 39: the list hash-joined rather
// than read per target row): UPDATE t SET v = s.w FROM s WHERE s.sk =
// t.k, then DELETE FROM t USING s WHERE s.sk = t.k AND s.w % 2 = 0, once
// with a list without a key and once with sk its primary key, each on
// fresh tables loaded by COPY. N is 100,000 (BENCH_UPDATE_FROM_ROWS
// overrides it). BENCH_UPDATE_FROM_BASELINE_BIN names another streamdb
// build, run the same way in the same run, side by side; PostgreSQL 15
// (fsync on) runs it too. A statement over BENCH_UPDATE_FROM_TIMEOUT
// (default 120s) is stopped and reported as that limit. It asserts
// nothing about speed.
func BenchmarkUpdateFrom(b *testing.B) {
	n := 100_000
	if v := os.Getenv("BENCH_UPDATE_FROM_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("BENCH_UPDATE_FROM_ROWS=%q: want a number of rows, at least 1000", v)
		}
	}
	limit := 120 * time.Second
	if v := os.Getenv("BENCH_UPDATE_FROM_TIMEOUT"); v != "" {
		var err error
		if limit, err = time.ParseDuration(v); err != nil {
			b.Fatalf("BENCH_UPDATE_FROM_TIMEOUT=%q: want a duration", v)
		}
	}
	report.Configf("UpdateFrom: UPDATE ... FROM and DELETE ... USING of a %d-row table joined by equality with a %d-row list (unkeyed, then keyed), statements stopped after %v", n, n, limit)
	type target struct{ name, dsn string }
	var targets []target
	sdb := startServer(b, "", nil)
	defer stopServer(b, sdb)
	targets = append(targets, target{"this build", sdb.DSN()})
	if bin := os.Getenv("BENCH_UPDATE_FROM_BASELINE_BIN"); bin != "" {
		base := startServerBinary(b, bin, "", nil)
		defer stopServer(b, base)
		targets = append(targets, target{"baseline " + bin, base.DSN()})
	}
	pg := testutil.StartPostgresDurable(b)
	targets = append(targets, target{"PostgreSQL 15", pg.DSN()})
	var t strings.Builder
	t.WriteString("| target | list | UPDATE ... FROM (s) | DELETE ... USING (s) |\n|---|---|---:|---:|\n")
	for _, tg := range targets {
		for _, keyed := range []bool{false, true} {
			list := "unkeyed"
			if keyed {
				list = "keyed"
			}
			upd, del := updateFromRun(b, tg.dsn, n, keyed, limit)
			report.Add("UpdateFrom", tg.name, fmt.Sprintf("UPDATE ... FROM, %d x %d rows, %s list", n, n, list), upd.Seconds(), "s")
			report.Add("UpdateFrom", tg.name, fmt.Sprintf("DELETE ... USING, %d x %d rows, %s list", n, n, list), del.Seconds(), "s")
			fmt.Fprintf(&t, "| %s | %s | %s | %s |\n", tg.name, list, limited(upd, limit), limited(del, limit))
		}
	}
	report.AddSection("UPDATE ... FROM and DELETE ... USING joined by equality", t.String())
	fmt.Print(t.String())
}

// limited formats d, or "over limit" when it reached limit.
func limited(d, limit time.Duration) string {
	if d >= limit {
		return fmt.Sprintf("over %.0f", limit.Seconds())
	}
	return fmt.Sprintf("%.2f", d.Seconds())
}

// updateFromRun loads fresh tables into dsn and times the UPDATE ...
// FROM and the DELETE ... USING (limit when stopped by the timeout).
func updateFromRun(b *testing.B, dsn string, n int, keyed bool, limit time.Duration) (upd, del time.Duration) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	suffix := "u"
	listCols := "sk BIGINT, w BIGINT"
	if keyed {
		suffix, listCols = "k", "sk BIGINT PRIMARY KEY, w BIGINT"
	}
	tt, st := "uft_"+suffix, "ufs_"+suffix
	copyRows(b, conn, tt, "k BIGINT PRIMARY KEY, v BIGINT", n, func(i int) []any { return []any{int64(i), int64(0)} })
	// Both tables' keys are 1..n (copyRows' i); the list's run
	// backwards, so that neither side's order helps.
	copyRows(b, conn, st, listCols, n, func(i int) []any { return []any{int64(n + 1 - i), int64(i)} })
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET statement_timeout = %d", limit.Milliseconds())); err != nil {
		b.Fatal(err)
	}
	timed := func(sql string, want int64) time.Duration {
		start := time.Now()
		tag, err := conn.Exec(ctx, sql)
		took := time.Since(start)
		if err != nil && strings.Contains(err.Error(), "57014") {
			report.Notef("UpdateFrom %s: stopped after %v: %s", dsn, limit, sql)
			return limit
		}
		if err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
		if tag.RowsAffected() != want {
			b.Fatalf("%s: %d rows, want %d", sql, tag.RowsAffected(), want)
		}
		return took
	}
	upd = timed(fmt.Sprintf("UPDATE %s SET v = %s.w FROM %s WHERE %s.sk = %s.k", tt, st, st, st, tt), int64(n))
	del = timed(fmt.Sprintf("DELETE FROM %s USING %s WHERE %s.sk = %s.k AND %s.w %% 2 = 0", tt, st, st, tt, st), int64(n/2))
	return upd, del
}
