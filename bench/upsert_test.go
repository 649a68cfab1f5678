package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// BenchmarkUpserts measures the single-row upsert ORMs send (INSERT ...
// ON CONFLICT (k) DO UPDATE SET v = t.v + 1) from 8 sessions on random
// keys of a 10k-row table, half of them taken (updated) and half new
// (inserted), side by side with the same sessions' UPDATE by primary key,
// on streamdb and on PostgreSQL 15 (fsync on). It asserts nothing about
// speed.
func BenchmarkUpserts(b *testing.B) {
	dur := 5 * time.Second
	if report.Mode == "full" {
		dur = 15 * time.Second
	}
	const rows, sessions = 10_000, 8
	report.Configf("Upserts: tables (k BIGINT PRIMARY KEY, v BIGINT, s TEXT) of %d rows loaded by one COPY; %d sessions run INSERT ... ON CONFLICT (k) DO UPDATE SET v = t.v + 1 on random keys in 1..%d for %v, then UPDATE ... WHERE k = $1 for as long", rows, sessions, 2*rows, dur)
	sdb := startServer(b, "", nil)
	pg := testutil.StartPostgresDurable(b)
	targets := []struct{ name, dsn string }{{"streamdb", sdb.DSN()}, {"PostgreSQL 15", pg.DSN()}}
	var t strings.Builder
	t.WriteString("| target | upserts/s | UPDATE by key/s | upsert / UPDATE |\n|---|---:|---:|---:|\n")
	rates := map[string][2]float64{}
	for _, tg := range targets {
		table := "up_bench"
		loadKeyed(b, tg.dsn, table, rows)
		upsert := fmt.Sprintf("INSERT INTO %s AS t VALUES ($1, 1, 'new') ON CONFLICT (k) DO UPDATE SET v = t.v + 1", table)
		up := keyedLoad(b, tg.dsn, table, upsert, 2*rows, sessions, dur)
		upd := keyedLoad(b, tg.dsn, table, fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE k = $1", table), rows, sessions, dur)
		rates[tg.name] = [2]float64{up, upd}
		report.Add("Upserts", tg.name, fmt.Sprintf("upsert by key, %d rows, %d sessions", rows, sessions), up, "statements/s")
		report.Add("Upserts", tg.name, fmt.Sprintf("UPDATE by key, %d rows, %d sessions", rows, sessions), upd, "statements/s")
		fmt.Fprintf(&t, "| %s | %.0f | %.0f | %.2f |\n", tg.name, up, upd, up/upd)
	}
	ratio := rates["streamdb"][0] / rates["PostgreSQL 15"][0]
	report.Add("Upserts", "ratio", "streamdb / PostgreSQL, upsert by key", ratio, "x")
	fmt.Fprintf(&t, "\nstreamdb / PostgreSQL, upsert by key: %.2f\n", ratio)
	report.AddSection("Upserts: streamdb vs PostgreSQL 15", t.String())
	fmt.Print(t.String())
}

// keyedLoad has sessions connections run stmt with a random key in 1..n
// for dur, and returns statements per second.
func keyedLoad(b *testing.B, dsn, table, stmt string, n, sessions int, dur time.Duration) float64 {
	b.Helper()
	rngs := make([]*rand.Rand, sessions)
	for w := range rngs {
		rngs[w] = rand.New(rand.NewPCG(uint64(w), 39))
	}
	rate, failed, lastErr := sessionLoad(b, dsn, "", sessions, dur, stmt, func(w int, _ int64) []any {
		return []any{1 + rngs[w].Int64N(int64(n))}
	})
	if failed > 0 { // 40001 when two sessions pick one key
		report.Notef("Upserts %s: %d statements failed, last: %v", table, failed, lastErr)
	}
	return rate
}
