package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// BenchmarkTableWrites: 1, 8 and 64 sessions each run single-row
// `INSERT INTO t VALUES ($1, $2)` into a keyed table (id BIGINT PRIMARY
// KEY, v BIGINT), autocommit, for a fixed time, against streamdb
// (synchronous_commit on, its default: each acknowledged INSERT is on
// disk) and side by side against PostgreSQL 15 with fsync and
// synchronous_commit on (each COMMIT flushes its WAL), then streamdb again
// with synchronous_commit off. It prints statements/s and the ratio
// streamdb / PostgreSQL; it asserts nothing about speed.
func BenchmarkTableWrites(b *testing.B) {
	dur := 5 * time.Second
	if report.Mode == "full" {
		dur = 15 * time.Second
	}
	report.Configf("TableWrites: single-row INSERTs into a keyed table, %v per case, pgx with cached prepared statements; PostgreSQL with fsync = on, synchronous_commit = on", dur)
	sdb := startServer(b, "", nil)
	pg := testutil.StartPostgresDurable(b)
	targets := []struct {
		name  string
		dsn   string
		setup string // run once before the cases
	}{
		{"streamdb (synchronous_commit on)", sdb.DSN(), "SET synchronous_commit = on"},
		{"PostgreSQL 15", pg.DSN(), "SET synchronous_commit = on"},
		{"streamdb (synchronous_commit off)", sdb.DSN(), "SET synchronous_commit = off"},
	}
	rates := map[string]map[int]float64{}
	sessions := []int{1, 8, 64}
	for _, n := range sessions {
		for ti, tg := range targets {
			// streamdb's SET of a server setting applies to the server;
			// PostgreSQL's to the session, so each session sets it.
			table := fmt.Sprintf("t_%d_%d", n, ti)
			rate, errs := tableWrites(b, tg.dsn, tg.setup, table, n, dur)
			if rates[tg.name] == nil {
				rates[tg.name] = map[int]float64{}
			}
			rates[tg.name][n] = rate
			f := report.Add("TableWrites", tg.name, fmt.Sprintf("%d sessions", n), rate, "statements/s")
			if errs > 0 {
				f.Note = fmt.Sprintf("%d statements failed", errs)
			}
		}
	}
	// Leave streamdb as it started.
	conn := sdb.Conn(b)
	execTimed(b, conn, "SET synchronous_commit = on")

	var t strings.Builder
	t.WriteString("| sessions |")
	for _, tg := range targets {
		fmt.Fprintf(&t, " %s |", tg.name)
	}
	t.WriteString(" streamdb / PostgreSQL (both synchronous_commit on) |\n|---:|")
	for range targets {
		t.WriteString("---:|")
	}
	t.WriteString("---:|\n")
	for _, n := range sessions {
		fmt.Fprintf(&t, "| %d |", n)
		for _, tg := range targets {
			fmt.Fprintf(&t, " %.0f |", rates[tg.name][n])
		}
		ratio := rates[targets[0].name][n] / rates[targets[1].name][n]
		fmt.Fprintf(&t, " %.2f |\n", ratio)
		report.Add("TableWrites", "ratio", fmt.Sprintf("streamdb / PostgreSQL, %d sessions", n), ratio, "x")
	}
	t.WriteString("\nstatements/s, single-row INSERT, autocommit.\n")
	report.AddSection("Table writes: streamdb vs PostgreSQL 15", t.String())
	fmt.Print(t.String())
}

// tableWrites creates a keyed table and has sessions connections insert
// distinct rows into it, one statement at a time, for dur. It returns
// statements per second and how many statements failed.
func tableWrites(b *testing.B, dsn, setup, table string, sessions int, dur time.Duration) (float64, int64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dur+5*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (id BIGINT PRIMARY KEY, v BIGINT)", table)); err != nil {
		b.Fatalf("create %s: %v", table, err)
	}
	insert := fmt.Sprintf("INSERT INTO %s VALUES ($1, $2)", table)
	rate, failed, lastErr := sessionLoad(b, dsn, setup, sessions, dur, insert, func(w int, i int64) []any {
		id := int64(w) + i*int64(sessions)
		return []any{id, id}
	})
	if failed > 0 {
		report.Notef("TableWrites %s, %d sessions: %d statements failed, last: %v", table, sessions, failed, lastErr)
	}
	return rate, failed
}
