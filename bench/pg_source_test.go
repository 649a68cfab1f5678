package bench

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"streamdb/pgcdc"
	"streamdb/tests/testutil"
)

// BenchmarkPGSource measures change data capture from PostgreSQL end to
// end, side by side with PostgreSQL's own logical replication into a
// PostgreSQL subscriber on the same machine: the initial copy of an
// N-row table, then N single-table updates (1,000 rows per source
// transaction) until the mirror holds them, and the two together (the
// issue's target: at least half PostgreSQL's rate). N is 200k in quick
// mode and 1M in full; BENCH_PG_ROWS overrides it (20000 runs in
// seconds). It asserts nothing about speed.
func BenchmarkPGSource(b *testing.B) {
	n := 200_000
	if report.Mode == "full" {
		n = 1_000_000
	}
	if v := os.Getenv("BENCH_PG_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("BENCH_PG_ROWS=%q: want a number of rows, at least 1000", v)
		}
	}
	const perTxn = 1000
	report.Configf("PGSource: source table (k bigint PRIMARY KEY, v bigint, s text) of %d rows on PostgreSQL 15 (wal_level logical); copy, then %d updates in transactions of %d rows; subscriber: streamdb CREATE SOURCE vs a PostgreSQL 15 CREATE SUBSCRIPTION (fsync off)", n, n, perTxn)
	src := testutil.StartPostgresLogical(b)
	sc := src.Conn(b)
	for _, t := range []string{"cdc_sdb", "cdc_pg"} {
		testutil.MustExec(b, sc,
			fmt.Sprintf("CREATE TABLE %s (k bigint PRIMARY KEY, v bigint, s text)", t),
			fmt.Sprintf("INSERT INTO %s SELECT g, 0, md5(g::text) FROM generate_series(1, %d) g", t, n),
			fmt.Sprintf("CREATE PUBLICATION pub_%s FOR TABLE %s", t, t))
	}
	update := func(table string) {
		for lo := 1; lo <= n; lo += perTxn {
			testutil.MustExec(b, sc, fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE k BETWEEN %d AND %d", table, lo, lo+perTxn-1))
		}
	}
	sourceLSN := func() string { return testutil.Scalar(b, sc, "SELECT pg_current_wal_lsn()::text") }

	// streamdb.
	sdb := startServer(b, "", nil)
	conn := sdb.Conn(b)
	start := time.Now()
	testutil.MustExec(b, conn, fmt.Sprintf("CREATE SOURCE cdc FROM POSTGRES (CONNECTION '%s', PUBLICATION 'pub_cdc_sdb') FOR ALL TABLES", src.DSN()))
	// Copied when a read sees the last row (the subscriber's is when
	// its table is ready).
	testutil.Poll(b, 30*time.Minute, "streamdb's copy to show", func() error {
		_, rows, err := testutil.QueryText(conn, time.Minute, fmt.Sprintf("SELECT count(*) FROM cdc_sdb WHERE k = %d", n), "")
		if err != nil || rows[0][0] != "1" {
			return fmt.Errorf("row %d not there yet (%v)", n, err)
		}
		return nil
	})
	sdbCopyTime := time.Since(start)
	sdbCopy := float64(n) / sdbCopyTime.Seconds()
	_, copyPeak := rssMB(sdb.PID())
	start = time.Now()
	update("cdc_sdb")
	target := sourceLSN()
	testutil.Poll(b, 30*time.Minute, "streamdb to apply the updates", func() error {
		_, rows, err := testutil.QueryText(conn, time.Minute, "SELECT applied_lsn FROM streamdb_sources", "")
		if err != nil {
			return err
		}
		want, _ := pgcdc.ParseLSN(target)
		if got, err := pgcdc.ParseLSN(rows[0][0]); err != nil || got < want {
			return fmt.Errorf("at %s, not yet at %s", rows[0][0], target)
		}
		return nil
	})
	sdbChangesTime := time.Since(start)
	sdbChanges := float64(n) / sdbChangesTime.Seconds()
	if got := testutil.Scalar(b, conn, "SELECT sum(v) FROM cdc_sdb"); got != fmt.Sprint(n) {
		b.Fatalf("streamdb's mirror has sum(v) = %s after the updates, want %d", got, n)
	}
	_, peak := rssMB(sdb.PID())

	// PostgreSQL subscriber.
	sub := testutil.StartPostgres(b)
	subc := sub.Conn(b)
	testutil.MustExec(b, subc, "CREATE TABLE cdc_pg (k bigint PRIMARY KEY, v bigint, s text)")
	start = time.Now()
	testutil.MustExec(b, subc, fmt.Sprintf("CREATE SUBSCRIPTION sub CONNECTION '%s' PUBLICATION pub_cdc_pg", src.DSN()))
	testutil.Poll(b, 30*time.Minute, "the subscriber's initial copy", func() error {
		if s := testutil.Scalar(b, subc, "SELECT count(*) FILTER (WHERE srsubstate <> 'r') FROM pg_subscription_rel"); s != "0" {
			return fmt.Errorf("%s tables still copying", s)
		}
		return nil
	})
	pgCopyTime := time.Since(start)
	pgCopy := float64(n) / pgCopyTime.Seconds()
	start = time.Now()
	update("cdc_pg")
	target = sourceLSN()
	testutil.Poll(b, 30*time.Minute, "the subscriber to apply the updates", func() error {
		if s := testutil.Scalar(b, sc, fmt.Sprintf("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'sub' AND confirmed_flush_lsn >= '%s'", target)); s != "1" {
			return fmt.Errorf("not yet at %s", target)
		}
		return nil
	})
	pgChangesTime := time.Since(start)
	pgChanges := float64(n) / pgChangesTime.Seconds()
	sdbAll := float64(2*n) / (sdbCopyTime + sdbChangesTime).Seconds()
	pgAll := float64(2*n) / (pgCopyTime + pgChangesTime).Seconds()
	if got := testutil.Scalar(b, subc, "SELECT sum(v) FROM cdc_pg"); got != fmt.Sprint(n) {
		b.Fatalf("the subscriber has sum(v) = %s after the updates, want %d", got, n)
	}

	report.Add("PGSource", "streamdb", "initial copy", sdbCopy, "rows/s")
	report.Add("PGSource", "streamdb", "updates end to end", sdbChanges, "rows/s")
	report.Add("PGSource", "streamdb", "copy and updates end to end", sdbAll, "rows/s")
	report.Add("PGSource", "streamdb", "server peak RSS after the copy", copyPeak, "MiB")
	report.Add("PGSource", "streamdb", "server peak RSS", peak, "MiB")
	report.Add("PGSource", "PostgreSQL 15 subscriber", "initial copy", pgCopy, "rows/s")
	report.Add("PGSource", "PostgreSQL 15 subscriber", "updates end to end", pgChanges, "rows/s")
	report.Add("PGSource", "PostgreSQL 15 subscriber", "copy and updates end to end", pgAll, "rows/s")
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, copy", sdbCopy/pgCopy, "x")
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, updates", sdbChanges/pgChanges, "x")
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, copy and updates (target >= 0.5)", sdbAll/pgAll, "x")
	report.AddSection("Change data capture from PostgreSQL", fmt.Sprintf(
		"%d rows copied, then %d updates.\n\n| subscriber | copy rows/s | updates rows/s | both, rows/s |\n|---|---:|---:|---:|\n| streamdb | %.0f | %.0f | %.0f |\n| PostgreSQL 15 | %.0f | %.0f | %.0f |\n| ratio | %.2f | %.2f | %.2f |\n\nstreamdb's peak RSS: %.0f MiB after the copy, %.0f MiB at the end.\n",
		n, n, sdbCopy, sdbChanges, sdbAll, pgCopy, pgChanges, pgAll, sdbCopy/pgCopy, sdbChanges/pgChanges, sdbAll/pgAll, copyPeak, peak))
}
