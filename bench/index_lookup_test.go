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

// BenchmarkIndexLookup measures issue 39's secondary indexes: a point
// SELECT by a non-key column (SELECT k, v, s FROM t WHERE v = $1 on
// random values) from 4 sessions, on a table of N rows with CREATE INDEX
// on v, on the same table without the index (a scan per statement), and
// in PostgreSQL 15 with the same index; also how long CREATE INDEX took on
// the loaded table. N is 1M (BENCH_INDEX_ROWS overrides it). It asserts
// nothing about speed.
func BenchmarkIndexLookup(b *testing.B) {
	n, dur := 1_000_000, 5*time.Second
	if report.Mode == "full" {
		dur = 15 * time.Second
	}
	if v := os.Getenv("BENCH_INDEX_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("BENCH_INDEX_ROWS=%q: want a positive integer", v)
		}
	}
	const sessions = 4
	report.Configf("IndexLookup: tables (k BIGINT PRIMARY KEY, v BIGINT, s TEXT) of %d rows loaded by one INSERT ... SELECT generate_series, v = k; CREATE INDEX ON t (v); then %d sessions run SELECT k, v, s FROM t WHERE v = $1 on random values for %v", n, sessions, dur)
	sdb := startServer(b, "", nil)
	pg := testutil.StartPostgresDurable(b)
	type target struct {
		name, dsn, table string
		index            bool
	}
	targets := []target{
		{"streamdb, index on v", sdb.DSN(), "il_indexed", true},
		{"streamdb, no index", sdb.DSN(), "il_plain", false},
		{"PostgreSQL 15, index on v", pg.DSN(), "il_indexed", true},
	}
	var t strings.Builder
	t.WriteString("| target | CREATE INDEX s | SELECT by v /s |\n|---|---:|---:|\n")
	rates := map[string]float64{}
	for _, tg := range targets {
		loadKeyed(b, tg.dsn, tg.table, n)
		build := "-"
		if tg.index {
			took := createIndex(b, tg.dsn, tg.table)
			build = fmt.Sprintf("%.2f", took.Seconds())
			report.Add("IndexLookup", tg.name, fmt.Sprintf("CREATE INDEX on %d rows", n), took.Seconds(), "s")
		}
		rngs := make([]*rand.Rand, sessions)
		for w := range rngs {
			rngs[w] = rand.New(rand.NewPCG(uint64(w), 39))
		}
		query := fmt.Sprintf("SELECT k, v, s FROM %s WHERE v = $1", tg.table)
		rate, failed, lastErr := sessionLoad(b, tg.dsn, "", sessions, dur, query, func(w int, _ int64) []any {
			return []any{1 + rngs[w].Int64N(int64(n))}
		})
		if failed > 0 {
			report.Notef("IndexLookup %s: %d SELECTs failed, last: %v", tg.name, failed, lastErr)
		}
		rates[tg.name] = rate
		report.Add("IndexLookup", tg.name, fmt.Sprintf("SELECT by v, %d rows, %d sessions", n, sessions), rate, "statements/s")
		fmt.Fprintf(&t, "| %s | %s | %.1f |\n", tg.name, build, rate)
	}
	vsScan := rates["streamdb, index on v"] / rates["streamdb, no index"]
	vsPG := rates["streamdb, index on v"] / rates["PostgreSQL 15, index on v"]
	report.Add("IndexLookup", "ratio", "streamdb with index / without", vsScan, "x")
	report.Add("IndexLookup", "ratio", "streamdb / PostgreSQL, both with the index", vsPG, "x")
	fmt.Fprintf(&t, "\nstreamdb with the index / without: %.1fx; streamdb / PostgreSQL with the index: %.2fx (%d rows)\n", vsScan, vsPG, n)
	report.AddSection("Index lookups: streamdb vs PostgreSQL 15", t.String())
	fmt.Print(t.String())
}

// createIndex runs CREATE INDEX ON table (v) and returns how long it took.
func createIndex(b *testing.B, dsn, table string) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	start := time.Now()
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE INDEX ON %s (v)", table)); err != nil {
		b.Fatalf("CREATE INDEX on %s: %v", table, err)
	}
	return time.Since(start)
}
