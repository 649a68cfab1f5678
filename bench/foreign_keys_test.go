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
)

// BenchmarkForeignKeys measures what a foreign key costs a write as its
// tables grow (issue 39: checks and actions by key, not by reading the
// other table):
//
//   - single-row INSERT into a table a child references, holding 1k rows
//     and N rows, next to the same INSERT into a table nothing
//     references (a parent's INSERTs are group-committed too);
//   - single-row INSERT into a child table whose parent holds 1k rows and
//     one whose parent holds N rows, the key referenced being the
//     parent's primary key, then a UNIQUE column of it; the ratio
//     large/small is the cost of growing the parent;
//   - single-row DELETE of a parent key whose 4 children CASCADE, the
//     child table holding 1k rows and then N rows, with an index on the
//     referencing column and without one (then the children are found by
//     a scan that streams, as PostgreSQL's own scan does);
//
// with the server's peak RSS (VmHWM, reset before each phase) over each
// phase. N is 1M (BENCH_FK_ROWS overrides it). It asserts nothing about
// speed.
func BenchmarkForeignKeys(b *testing.B) {
	large, dur := 1_000_000, 5*time.Second
	if v := os.Getenv("BENCH_FK_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4000 {
			b.Fatalf("BENCH_FK_ROWS=%q: want a number of rows, at least 4000", v)
		}
		large = n
	}
	const small, sessions = 1_000, 4
	report.Configf("ForeignKeys: parent and child INSERTs from %d sessions for %v per table; parent DELETEs (each cascading to 4 children) from one session for %v or until its keys run out; tables loaded by COPY before their foreign key is added", sessions, dur, dur)
	sdb := startServer(b, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	conn, err := pgx.Connect(ctx, sdb.DSN())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	exec := func(sql string) {
		b.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}

	var t strings.Builder
	fmt.Fprintf(&t, "| write | 1k rows /s | %d rows /s | large / small | first statement, large (s) | RSS at start, large (MiB) | peak RSS, large (MiB) |\n|---|---:|---:|---:|---:|---:|---:|\n", large)
	row := func(name string, rates [2]float64, m phaseMemory) {
		report.Add("ForeignKeys", "streamdb", name+", 1k rows", rates[0], "statements/s")
		report.Add("ForeignKeys", "streamdb", fmt.Sprintf("%s, %d rows", name, large), rates[1], "statements/s")
		report.Add("ForeignKeys", "streamdb", fmt.Sprintf("%s, %d rows / 1k rows", name, large), rates[1]/rates[0], "x")
		report.Add("ForeignKeys", "streamdb", fmt.Sprintf("%s, %d rows, first statement", name, large), m.first.Seconds(), "s")
		report.Add("ForeignKeys", "streamdb", fmt.Sprintf("%s, %d rows, server RSS at start", name, large), m.start, "MiB")
		report.Add("ForeignKeys", "streamdb", fmt.Sprintf("%s, %d rows, server peak RSS", name, large), m.peak, "MiB")
		fmt.Fprintf(&t, "| %s | %.1f | %.1f | %.3f | %.2f | %.0f | %.0f |\n", name, rates[0], rates[1], rates[1]/rates[0], m.first.Seconds(), m.start, m.peak)
	}
	// first runs one statement before a phase is measured (the first
	// write builds what later ones reuse, such as a UNIQUE constraint's
	// index) and resets the peak RSS.
	first := func(sql string) phaseMemory {
		b.Helper()
		var m phaseMemory
		resetPeakRSS(b, sdb.PID())
		m.start, _ = rssMB(sdb.PID())
		start := time.Now()
		exec(sql)
		m.first = time.Since(start)
		return m
	}

	// Parent INSERTs: single-row INSERTs into a table a child references
	// (committed by group commit as into a table with no foreign key),
	// next to the same INSERTs into a table nothing references.
	for _, referenced := range []bool{true, false} {
		name := "INSERT, table no foreign key references"
		if referenced {
			name = "parent INSERT, table referenced by a child"
		}
		var rates [2]float64
		var m phaseMemory
		for i, n := range []int{small, large} {
			table := fmt.Sprintf("fki_%t_%d", referenced, n)
			copyRows(b, conn, table, "k BIGINT PRIMARY KEY, v BIGINT", n, func(i int) []any { return []any{int64(i), int64(i)} })
			if referenced {
				exec(fmt.Sprintf("CREATE TABLE %s_child (k BIGINT PRIMARY KEY, p BIGINT REFERENCES %s)", table, table))
			}
			m = first(fmt.Sprintf("INSERT INTO %s VALUES (-1, -1)", table))
			rate, failed, lastErr := sessionLoad(b, sdb.DSN(), "", sessions, dur, "INSERT INTO "+table+" VALUES ($1, $2)", func(w int, i int64) []any {
				k := int64(n) + 1 + int64(w)<<40 + i
				return []any{k, k}
			})
			if failed > 0 {
				b.Fatalf("INSERT INTO %s: %d failed, last: %v", table, failed, lastErr)
			}
			rates[i] = rate
			_, m.peak = rssMB(sdb.PID())
		}
		row(name, rates, m)
	}

	// Child INSERTs: the parent's size varies.
	for _, by := range []string{"primary key", "UNIQUE"} {
		var rates [2]float64
		var m phaseMemory
		tag := strings.ToLower(strings.Fields(by)[0])
		for i, n := range []int{small, large} {
			parent := fmt.Sprintf("fkp_%s_%d", tag, n)
			child := fmt.Sprintf("fkc_%s_%d", tag, n)
			copyRows(b, conn, parent, "k BIGINT PRIMARY KEY, u BIGINT", n, func(i int) []any { return []any{int64(i), int64(i)} })
			ref := parent
			if by == "UNIQUE" {
				exec(fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_u UNIQUE (u)", parent, parent))
				ref += " (u)"
			}
			exec(fmt.Sprintf("CREATE TABLE %s (k BIGINT PRIMARY KEY, p BIGINT REFERENCES %s)", child, ref))
			m = first(fmt.Sprintf("INSERT INTO %s VALUES (-1, %d)", child, n))
			rngs := make([]*rand.Rand, sessions)
			for w := range rngs {
				rngs[w] = rand.New(rand.NewPCG(uint64(w), 39))
			}
			rate, failed, lastErr := sessionLoad(b, sdb.DSN(), "", sessions, dur, "INSERT INTO "+child+" VALUES ($1, $2)", func(w int, i int64) []any {
				return []any{int64(w)<<40 | i, 1 + rngs[w].Int64N(int64(n))}
			})
			if failed > 0 {
				b.Fatalf("INSERT INTO %s: %d failed, last: %v", child, failed, lastErr)
			}
			rates[i] = rate
			_, m.peak = rssMB(sdb.PID())
		}
		row("child INSERT, parent referenced by its "+by, rates, m)
	}

	// Parent DELETEs cascading: the child's size varies.
	for _, indexed := range []bool{true, false} {
		name := "parent DELETE, CASCADE to 4 of the child's rows, no index on them"
		if indexed {
			name = "parent DELETE, CASCADE to 4 of the child's rows, indexed"
		}
		var rates [2]float64
		var m phaseMemory
		for i, n := range []int{small, large} {
			parent := fmt.Sprintf("fkq_%t_%d", indexed, n)
			child := fmt.Sprintf("fkd_%t_%d", indexed, n)
			keys := n / 4
			copyRows(b, conn, parent, "k BIGINT PRIMARY KEY", keys, func(i int) []any { return []any{int64(i)} })
			copyRows(b, conn, child, "k BIGINT PRIMARY KEY, p BIGINT", n, func(i int) []any { return []any{int64(i), int64(1 + (i-1)%keys)} })
			exec(fmt.Sprintf("ALTER TABLE %s ADD FOREIGN KEY (p) REFERENCES %s ON DELETE CASCADE", child, parent))
			if indexed {
				exec(fmt.Sprintf("CREATE INDEX ON %s (p)", child))
			}
			m = first(fmt.Sprintf("DELETE FROM %s WHERE k = %d", parent, keys))
			rates[i] = cascadingDeletes(b, sdb.DSN(), parent, keys-1, dur)
			_, m.peak = rssMB(sdb.PID())
			var left int64
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+child).Scan(&left); err != nil {
				b.Fatal(err)
			}
			report.Notef("ForeignKeys %s: %d rows left of %d", child, left, n)
		}
		row(name, rates, m)
	}
	report.AddSection("Foreign keys: the cost of a write as the other table grows", t.String())
	fmt.Print(t.String())
}

// phaseMemory is what one measured phase took beyond its rate: its first
// statement, the server's RSS when it started and its peak RSS over it.
type phaseMemory struct {
	first       time.Duration
	start, peak float64
}

// copyRows creates table with columns cols and loads n rows (row(i) for
// i = 1..n) in one COPY, returning once a count sees them all.
func copyRows(b *testing.B, conn *pgx.Conn, table, cols string, n int, row func(i int) []any) {
	b.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", table, cols)); err != nil {
		b.Fatal(err)
	}
	var names []string
	for _, c := range strings.Split(cols, ",") {
		names = append(names, strings.Fields(c)[0])
	}
	i := 0
	copied, err := conn.CopyFrom(ctx, pgx.Identifier{table}, names, pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		i++
		return row(i), nil
	}))
	if err != nil || copied != int64(n) {
		b.Fatalf("COPY into %s: %d rows, %v", table, copied, err)
	}
	var count int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&count); err != nil || count != int64(n) {
		b.Fatalf("count %s: %d, %v", table, count, err)
	}
}

// cascadingDeletes deletes parent's keys 1, 2, ... one statement each
// from one session, for dur or until keys are gone, and returns
// statements per second.
func cascadingDeletes(b *testing.B, dsn, parent string, keys int, dur time.Duration) float64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dur+10*time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	done := 0
	start := time.Now()
	deadline := start.Add(dur)
	for k := 1; k <= keys && time.Now().Before(deadline); k++ {
		tag, err := c.Exec(ctx, "DELETE FROM "+parent+" WHERE k = $1", int64(k))
		if err != nil || tag.RowsAffected() != 1 {
			b.Fatalf("DELETE FROM %s WHERE k = %d: %v, %v", parent, k, tag, err)
		}
		done++
	}
	return float64(done) / time.Since(start).Seconds()
}

// resetPeakRSS resets the peak RSS (VmHWM) the kernel reports for pid, so
// that the next reading covers what follows only.
func resetPeakRSS(b *testing.B, pid int) {
	b.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		b.Logf("could not reset the server's peak RSS: %v", err)
	}
}
