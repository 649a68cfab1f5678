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
)

// BenchmarkUniqueConstraint measures a UNIQUE constraint on a large table
// after a restart (issue 39: checked by key from a persisted index, not
// from an index of the whole table in memory built by the first write):
// N rows (k BIGINT PRIMARY KEY, u BIGINT, v TEXT) loaded by COPY, then
// ALTER TABLE ... ADD UNIQUE (u) and a child table referencing u; after
// the server restarts, the first INSERT into the table, the first INSERT
// into the child (its parent found through u), single-row INSERTs into
// the table from 4 sessions for 5 s, and the server's RSS at start and
// peak over those (VmHWM, reset after the restart). N is 1M
// (BENCH_UNIQUE_ROWS overrides it). BENCH_UNIQUE_BASELINE_BIN names
// another streamdb build, run the same way in the same run, side by side.
// It asserts nothing about speed.
func BenchmarkUniqueConstraint(b *testing.B) {
	n, dur := 1_000_000, 5*time.Second
	if v := os.Getenv("BENCH_UNIQUE_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("BENCH_UNIQUE_ROWS=%q: want a number of rows, at least 1000", v)
		}
	}
	const sessions = 4
	builds := []struct{ name, bin string }{{"this build", ""}}
	if bin := os.Getenv("BENCH_UNIQUE_BASELINE_BIN"); bin != "" {
		builds = append(builds, struct{ name, bin string }{"baseline " + bin, bin})
	}
	report.Configf("UniqueConstraint: %d rows with a UNIQUE column; after a restart, the first INSERT into the table and into a child referencing the column, then single-row INSERTs from %d sessions for %v", n, sessions, dur)
	var t strings.Builder
	fmt.Fprintf(&t, "| build | ADD UNIQUE (s) | restart (s) | first INSERT (s) | first child INSERT (s) | INSERTs/s | RSS at start (MiB) | peak RSS (MiB) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, build := range builds {
		r := uniqueAfterRestart(b, build.bin, n, sessions, dur)
		for _, f := range []struct {
			what string
			v    float64
			unit string
		}{
			{"ADD UNIQUE", r.add.Seconds(), "s"}, {"restart", r.restart.Seconds(), "s"},
			{"first INSERT after restart", r.first.Seconds(), "s"}, {"first child INSERT after restart", r.firstChild.Seconds(), "s"},
			{"INSERTs", r.rate, "statements/s"}, {"RSS at start", r.start, "MiB"}, {"peak RSS", r.peak, "MiB"},
		} {
			report.Add("UniqueConstraint", build.name, fmt.Sprintf("%s, %d rows", f.what, n), f.v, f.unit)
		}
		fmt.Fprintf(&t, "| %s | %.2f | %.2f | %.3f | %.3f | %.0f | %.0f | %.0f |\n", build.name, r.add.Seconds(), r.restart.Seconds(),
			r.first.Seconds(), r.firstChild.Seconds(), r.rate, r.start, r.peak)
	}
	report.AddSection("UNIQUE constraint: the first writes after a restart", t.String())
	fmt.Print(t.String())
}

// uniqueRun is what one build did in BenchmarkUniqueConstraint.
type uniqueRun struct {
	add, restart, first, firstChild time.Duration
	rate, start, peak               float64
}

func uniqueAfterRestart(b *testing.B, bin string, n, sessions int, dur time.Duration) uniqueRun {
	b.Helper()
	var r uniqueRun
	sdb := startServerBinary(b, bin, "", nil)
	defer stopServer(b, sdb)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, sdb.DSN())
	if err != nil {
		b.Fatal(err)
	}
	copyRows(b, conn, "uq", "k BIGINT PRIMARY KEY, u BIGINT, v TEXT", n, func(i int) []any {
		return []any{int64(i), int64(i) * 3, "row " + strconv.Itoa(i)}
	})
	r.add = execTimed(b, conn, "ALTER TABLE uq ADD CONSTRAINT uq_u UNIQUE (u)")
	execTimed(b, conn, "CREATE TABLE uq_child (k BIGINT PRIMARY KEY, pu BIGINT REFERENCES uq (u))")
	conn.Close(ctx)

	start := time.Now()
	sdb.Restart(b)
	r.restart = time.Since(start)
	resetPeakRSS(b, sdb.PID())
	r.start, _ = rssMB(sdb.PID())
	conn, err = pgx.Connect(ctx, sdb.DSN())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	r.first = execTimed(b, conn, fmt.Sprintf("INSERT INTO uq VALUES (%d, %d, 'new')", n+1, int64(n+1)*3))
	r.firstChild = execTimed(b, conn, fmt.Sprintf("INSERT INTO uq_child VALUES (1, %d)", int64(n/2)*3))
	if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO uq VALUES (%d, 3, 'dup')", n+2)); err == nil || !strings.Contains(err.Error(), "23505") {
		b.Fatalf("a duplicate of u after the restart: %v, want 23505", err)
	}
	rate, failed, lastErr := sessionLoad(b, sdb.DSN(), "", sessions, dur, "INSERT INTO uq VALUES ($1, $2, 'load')", func(w int, i int64) []any {
		k := int64(n) + 10 + int64(w)<<32 + i
		return []any{k, k * 3}
	})
	if failed > 0 {
		b.Fatalf("INSERT INTO uq: %d failed, last: %v", failed, lastErr)
	}
	r.rate = rate
	_, r.peak = rssMB(sdb.PID())
	return r
}
