package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
// seconds). It runs in rounds (3; BENCH_PG_ROUNDS), each round both
// subscribers in turn, the order alternating, on fresh tables of one
// source; the headline is the median of the rounds' ratios. It asserts
// nothing about speed.
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
	rounds := 3
	if v := os.Getenv("BENCH_PG_ROUNDS"); v != "" {
		var err error
		if rounds, err = strconv.Atoi(v); err != nil || rounds < 1 {
			b.Fatalf("BENCH_PG_ROUNDS=%q: want a positive integer", v)
		}
	}
	report.Configf("PGSource: source table (k bigint PRIMARY KEY, v bigint, s text) of %d rows on PostgreSQL 15 (wal_level logical); copy, then %d updates in transactions of %d rows; subscriber: streamdb CREATE SOURCE vs a PostgreSQL 15 CREATE SUBSCRIPTION (fsync off); %d rounds, the order alternating", n, n, pgPerTxn, rounds)
	loadStart := loadAvg()
	src := testutil.StartPostgresLogical(b)
	sc := src.Conn(b)

	var sdbRuns, pgRuns []cdcRun
	var copyRatios, updRatios, allRatios []float64
	for round := 1; round <= rounds; round++ {
		sdbTable, pgTable := fmt.Sprintf("cdc_sdb_%d", round), fmt.Sprintf("cdc_pg_%d", round)
		for _, t := range []string{sdbTable, pgTable} {
			testutil.MustExec(b, sc,
				fmt.Sprintf("CREATE TABLE %s (k bigint PRIMARY KEY, v bigint, s text)", t),
				fmt.Sprintf("INSERT INTO %s SELECT g, 0, md5(g::text) FROM generate_series(1, %d) g", t, n),
				fmt.Sprintf("CREATE PUBLICATION pub_%s FOR TABLE %s", t, t),
				"CHECKPOINT")
		}
		var sdb, pg cdcRun
		runSDB := func() { sdb = cdcStreamdb(b, src, sc, sdbTable, n) }
		runPG := func() { pg = cdcPostgres(b, src, sc, pgTable, n) }
		if round%2 == 1 {
			runSDB()
			runPG()
		} else {
			runPG()
			runSDB()
		}
		testutil.MustExec(b, sc, "DROP TABLE "+sdbTable, "DROP TABLE "+pgTable,
			"DROP PUBLICATION pub_"+sdbTable, "DROP PUBLICATION pub_"+pgTable)
		sdbRuns, pgRuns = append(sdbRuns, sdb), append(pgRuns, pg)
		copyRatios = append(copyRatios, sdb.copy/pg.copy)
		updRatios = append(updRatios, sdb.changes/pg.changes)
		allRatios = append(allRatios, sdb.all/pg.all)
		cas := fmt.Sprintf("round %d", round)
		report.Add("PGSource", cas, "streamdb copy and updates end to end", sdb.all, "rows/s")
		report.Add("PGSource", cas, "PostgreSQL 15 subscriber copy and updates end to end", pg.all, "rows/s")
		report.Add("PGSource", cas, "ratio streamdb / PostgreSQL, copy and updates", sdb.all/pg.all, "x")
		report.Add("PGSource", cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	}

	med := func(runs []cdcRun, f func(cdcRun) float64) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	copyOf := func(r cdcRun) float64 { return r.copy }
	changesOf := func(r cdcRun) float64 { return r.changes }
	allOf := func(r cdcRun) float64 { return r.all }
	of := fmt.Sprintf(", median of %d", rounds)
	report.Add("PGSource", "streamdb", "initial copy"+of, med(sdbRuns, copyOf), "rows/s")
	report.Add("PGSource", "streamdb", "updates end to end"+of, med(sdbRuns, changesOf), "rows/s")
	report.Add("PGSource", "streamdb", "copy and updates end to end"+of, med(sdbRuns, allOf), "rows/s")
	report.Add("PGSource", "streamdb", "server peak RSS after the copy, highest", maxOf(sdbRuns, func(r cdcRun) float64 { return r.copyPeak }), "MiB")
	report.Add("PGSource", "streamdb", "server peak RSS, highest", maxOf(sdbRuns, func(r cdcRun) float64 { return r.peak }), "MiB")
	report.Add("PGSource", "PostgreSQL 15 subscriber", "initial copy"+of, med(pgRuns, copyOf), "rows/s")
	report.Add("PGSource", "PostgreSQL 15 subscriber", "updates end to end"+of, med(pgRuns, changesOf), "rows/s")
	report.Add("PGSource", "PostgreSQL 15 subscriber", "copy and updates end to end"+of, med(pgRuns, allOf), "rows/s")
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, copy"+of+" rounds", median(copyRatios), "x")
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, updates"+of+" rounds", median(updRatios), "x")
	st := Summarize(allRatios)
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, copy and updates"+of+" rounds (target >= 0.5)", median(allRatios), "x")
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, copy and updates, lowest round", st.Min, "x")
	report.Add("PGSource", "ratio", "streamdb / PostgreSQL, copy and updates, highest round", st.Max, "x")
	report.AddSection("Change data capture from PostgreSQL", fmt.Sprintf(
		"%d rows copied, then %d updates; %d rounds, medians (the ratio row is the median of the rounds' ratios; copy and updates: lowest %.2f, highest %.2f). Load average (1, 5, 15 min) %s at the start, %s at the end.\n\n| subscriber | copy rows/s | updates rows/s | both, rows/s |\n|---|---:|---:|---:|\n| streamdb | %.0f | %.0f | %.0f |\n| PostgreSQL 15 | %.0f | %.0f | %.0f |\n| ratio | %.2f | %.2f | %.2f |\n\nstreamdb's peak RSS: %.0f MiB after the copy, %.0f MiB at the end (highest of the rounds).\n",
		n, n, rounds, st.Min, st.Max, loadStart, loadAvg(),
		med(sdbRuns, copyOf), med(sdbRuns, changesOf), med(sdbRuns, allOf),
		med(pgRuns, copyOf), med(pgRuns, changesOf), med(pgRuns, allOf),
		median(copyRatios), median(updRatios), median(allRatios),
		maxOf(sdbRuns, func(r cdcRun) float64 { return r.copyPeak }), maxOf(sdbRuns, func(r cdcRun) float64 { return r.peak })))
}

// pgPerTxn is the rows each source transaction of BenchmarkPGSource
// updates.
const pgPerTxn = 1000

// cdcRun is one subscriber's figures in one round: rows/s of the copy,
// of the updates and of both, and (streamdb) peak RSS in MiB.
type cdcRun struct {
	copy, changes, all float64
	copyPeak, peak     float64
}

func maxOf(runs []cdcRun, f func(cdcRun) float64) float64 {
	m := 0.0
	for _, r := range runs {
		m = max(m, f(r))
	}
	return m
}

// cdcUpdate runs the n updates of table on the source, pgPerTxn rows per
// transaction, and returns the source position every one of them ends
// at or before: the insert position, as the source runs with
// synchronous_commit off and its write position can be behind commits.
func cdcUpdate(b *testing.B, sc *pgx.Conn, table string, n int) pgcdc.LSN {
	for lo := 1; lo <= n; lo += pgPerTxn {
		testutil.MustExec(b, sc, fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE k BETWEEN %d AND %d", table, lo, lo+pgPerTxn-1))
	}
	lsn, err := pgcdc.ParseLSN(testutil.Scalar(b, sc, "SELECT pg_current_wal_insert_lsn()::text"))
	if err != nil {
		b.Fatal(err)
	}
	return lsn
}

// cdcStreamdb mirrors table into a fresh streamdb server: the copy, done
// when a read sees the last row, then the updates, done when
// streamdb_sources says the source's position is applied. The source
// (and its slot) is dropped at the end, so that it decodes nothing of
// the other subscriber's run.
func cdcStreamdb(b *testing.B, src *testutil.Postgres, sc *pgx.Conn, table string, n int) cdcRun {
	sdb := startServer(b, "", nil)
	defer stopServer(b, sdb)
	conn := sdb.Conn(b)
	var r cdcRun
	start := time.Now()
	testutil.MustExec(b, conn, fmt.Sprintf("CREATE SOURCE cdc FROM POSTGRES (CONNECTION '%s', PUBLICATION 'pub_%s') FOR ALL TABLES", src.DSN(), table))
	testutil.Poll(b, 30*time.Minute, "streamdb's copy to show", func() error {
		_, rows, err := testutil.QueryText(conn, time.Minute, fmt.Sprintf("SELECT count(*) FROM %s WHERE k = %d", table, n), "")
		if err != nil || rows[0][0] != "1" {
			return fmt.Errorf("row %d not there yet (%v)", n, err)
		}
		return nil
	})
	copyTime := time.Since(start)
	_, r.copyPeak = rssMB(sdb.PID())
	start = time.Now()
	target := cdcUpdate(b, sc, table, n)
	testutil.Poll(b, 30*time.Minute, "streamdb to apply the updates", func() error {
		_, rows, err := testutil.QueryText(conn, time.Minute, "SELECT applied_lsn FROM streamdb_sources", "")
		if err != nil {
			return err
		}
		if got, err := pgcdc.ParseLSN(rows[0][0]); err != nil || got < target {
			return fmt.Errorf("at %s, not yet at %s", rows[0][0], target)
		}
		return nil
	})
	changesTime := time.Since(start)
	if got := testutil.Scalar(b, conn, "SELECT sum(v) FROM "+table); got != fmt.Sprint(n) {
		b.Fatalf("streamdb's mirror has sum(v) = %s after the updates, want %d", got, n)
	}
	_, r.peak = rssMB(sdb.PID())
	testutil.MustExec(b, conn, "DROP SOURCE cdc CASCADE")
	r.copy, r.changes = float64(n)/copyTime.Seconds(), float64(n)/changesTime.Seconds()
	r.all = float64(2*n) / (copyTime + changesTime).Seconds()
	return r
}

// cdcPostgres replicates table into a fresh PostgreSQL subscriber: the
// copy, done when every table is ready, then the updates, done when the
// slot confirms the source's position. The subscription (and its slot)
// is dropped at the end.
func cdcPostgres(b *testing.B, src *testutil.Postgres, sc *pgx.Conn, table string, n int) cdcRun {
	sub := testutil.StartPostgres(b)
	defer sub.Stop(b)
	subc := sub.Conn(b)
	defer subc.Close(context.Background())
	testutil.MustExec(b, subc, fmt.Sprintf("CREATE TABLE %s (k bigint PRIMARY KEY, v bigint, s text)", table))
	var r cdcRun
	start := time.Now()
	testutil.MustExec(b, subc, fmt.Sprintf("CREATE SUBSCRIPTION sub CONNECTION '%s' PUBLICATION pub_%s", src.DSN(), table))
	testutil.Poll(b, 30*time.Minute, "the subscriber's initial copy", func() error {
		if s := testutil.Scalar(b, subc, "SELECT count(*) FILTER (WHERE srsubstate <> 'r') FROM pg_subscription_rel"); s != "0" {
			return fmt.Errorf("%s tables still copying", s)
		}
		return nil
	})
	copyTime := time.Since(start)
	start = time.Now()
	target := cdcUpdate(b, sc, table, n)
	testutil.Poll(b, 30*time.Minute, "the subscriber to apply the updates", func() error {
		if s := testutil.Scalar(b, sc, fmt.Sprintf("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'sub' AND confirmed_flush_lsn >= '%s'", target)); s != "1" {
			return fmt.Errorf("not yet at %s", target)
		}
		return nil
	})
	changesTime := time.Since(start)
	if got := testutil.Scalar(b, subc, "SELECT sum(v) FROM "+table); got != fmt.Sprint(n) {
		b.Fatalf("the subscriber has sum(v) = %s after the updates, want %d", got, n)
	}
	testutil.MustExec(b, subc, "DROP SUBSCRIPTION sub")
	r.copy, r.changes = float64(n)/copyTime.Seconds(), float64(n)/changesTime.Seconds()
	r.all = float64(2*n) / (copyTime + changesTime).Seconds()
	return r
}
