package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// BenchmarkKeyedWrites measures what issue 39 asks of tables that
// applications write by key, side by side with PostgreSQL 15 (fsync on):
//
//   - bulk load: one COPY ... FROM STDIN of N rows into a table with a
//     primary key (one commit, far over a NATS message; in PostgreSQL a
//     COPY into an indexed table), its rate, the ratio streamdb /
//     PostgreSQL and the server's peak RSS (VmHWM) right after it, and
//     after a count(*) of the rows that follows;
//   - single-row UPDATE by primary key from 8 sessions on a table of 10k
//     rows and on one of N rows: statements/s, and the ratio large/small
//     (the cost of a point write must not grow with the table).
//
// N is 1M in quick mode and 10M in full (BENCH_KEYED_ROWS overrides it).
// It asserts nothing about speed.
func BenchmarkKeyedWrites(b *testing.B) {
	large, dur := 1_000_000, 5*time.Second
	if report.Mode == "full" {
		large, dur = 10_000_000, 15*time.Second
	}
	if v := os.Getenv("BENCH_KEYED_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("BENCH_KEYED_ROWS=%q: want a number of rows", v)
		}
		large = n
	}
	const small, sessions = 10_000, 8
	report.Configf("KeyedWrites: tables (k BIGINT PRIMARY KEY, v BIGINT, s TEXT) loaded by one COPY FROM STDIN (pgx CopyFrom, binary); then %d sessions run UPDATE t SET v = v + 1 WHERE k = $1 on random keys for %v; PostgreSQL with fsync = on, synchronous_commit = on", sessions, dur)
	sdb := startServer(b, "", nil)
	pg := testutil.StartPostgresDurable(b)
	targets := []struct{ name, dsn string }{{"streamdb", sdb.DSN()}, {"PostgreSQL 15", pg.DSN()}}

	var t strings.Builder
	t.WriteString("| target | COPY rows/s | UPDATE/s, 10k rows | UPDATE/s, " + fmt.Sprint(large) + " rows | large / small |\n|---|---:|---:|---:|---:|\n")
	updates := map[string][2]float64{}
	loads := map[string]float64{}
	var peak float64
	for _, tg := range targets {
		var rates [2]float64
		for i, n := range []int{small, large} {
			table := fmt.Sprintf("kw_%d", n)
			var copyPeak float64
			took := loadKeyedThen(b, tg.dsn, table, n, func() {
				if tg.name == "streamdb" && n == large {
					_, copyPeak = rssMB(sdb.PID())
				}
			})
			if n == large {
				loads[tg.name] = float64(n) / took.Seconds()
				report.Add("KeyedWrites", tg.name, fmt.Sprintf("COPY %d rows", n), loads[tg.name], "rows/s")
				if tg.name == "streamdb" {
					peak = copyPeak
					report.Add("KeyedWrites", tg.name, fmt.Sprintf("server peak RSS after the COPY of %d rows", n), peak, "MiB")
					_, counted := rssMB(sdb.PID())
					report.Add("KeyedWrites", tg.name, fmt.Sprintf("server peak RSS after the COPY of %d rows and a count(*) of them", n), counted, "MiB")
				}
			}
			rates[i] = keyedUpdates(b, tg.dsn, table, n, sessions, dur)
			report.Add("KeyedWrites", tg.name, fmt.Sprintf("UPDATE by key, %d rows, %d sessions", n, sessions), rates[i], "statements/s")
		}
		updates[tg.name] = rates
		report.Add("KeyedWrites", tg.name, fmt.Sprintf("UPDATE by key, %d rows / 10k rows", large), rates[1]/rates[0], "x")
		fmt.Fprintf(&t, "| %s | %.0f | %.0f | %.0f | %.2f |\n", tg.name, loads[tg.name], rates[0], rates[1], rates[1]/rates[0])
	}
	ratio := updates["streamdb"][1] / updates["PostgreSQL 15"][1]
	report.Add("KeyedWrites", "ratio", fmt.Sprintf("streamdb / PostgreSQL, UPDATE by key, %d rows", large), ratio, "x")
	copyRatio := loads["streamdb"] / loads["PostgreSQL 15"]
	report.Add("KeyedWrites", "ratio", fmt.Sprintf("streamdb / PostgreSQL, COPY of %d rows", large), copyRatio, "x")
	fmt.Fprintf(&t, "\nstreamdb / PostgreSQL, UPDATE by key on %d rows: %.2f; COPY of %d rows: %.2f (streamdb peak RSS %.0f MiB)\n", large, ratio, large, copyRatio, peak)
	report.AddSection("Keyed writes: streamdb vs PostgreSQL 15", t.String())
	fmt.Print(t.String())
}

// loadKeyed creates table and fills it with n rows in one COPY, returning
// how long it took until a SELECT sees them.
func loadKeyed(b *testing.B, dsn, table string, n int) time.Duration {
	return loadKeyedThen(b, dsn, table, n, func() {})
}

// loadKeyedThen is loadKeyed that runs copied once the COPY has answered,
// before the SELECT (an ad-hoc count holds rows of its own).
func loadKeyedThen(b *testing.B, dsn, table string, n int, copied func()) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (k BIGINT PRIMARY KEY, v BIGINT, s TEXT)", table)); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	i := 0
	rows, err := conn.CopyFrom(ctx, pgx.Identifier{table}, []string{"k", "v", "s"}, pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		i++
		return []any{int64(i), int64(i), "row " + strconv.Itoa(i)}, nil
	}))
	if err != nil || rows != int64(n) {
		b.Fatalf("COPY into %s: %d rows, %v", table, rows, err)
	}
	copied()
	// Until the table has applied the load, a write reads the load's
	// changes from its log: the updates are measured on the table at rest.
	var count int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&count); err != nil || count != int64(n) {
		b.Fatalf("count %s: %d, %v", table, count, err)
	}
	return time.Since(start)
}

// keyedUpdates has sessions connections update random rows of table (keys
// 1..n) by primary key for dur, and returns statements per second.
func keyedUpdates(b *testing.B, dsn, table string, n, sessions int, dur time.Duration) float64 {
	b.Helper()
	update := fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE k = $1", table)
	rngs := make([]*rand.Rand, sessions)
	for w := range rngs {
		rngs[w] = rand.New(rand.NewPCG(uint64(w), 39))
	}
	rate, failed, lastErr := sessionLoad(b, dsn, "", sessions, dur, update, func(w int, _ int64) []any {
		return []any{1 + rngs[w].Int64N(int64(n))}
	})
	if failed > 0 { // 40001 when two sessions pick one key
		report.Notef("KeyedWrites %s: %d UPDATEs failed, last: %v", table, failed, lastErr)
	}
	return rate
}
