package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestConcurrentViewReaders has 32 sessions, each on its own connection,
// read several materialized views over and over while events arrive on
// the views' stream. Event i has k = i and v = i, and arrives in order, so
// every epoch holds a prefix 0..n-1 of the events: each answer must be the
// view's contents for some n (its own total count), no session may see n
// go back, and no read may fail.
func TestConcurrentViewReaders(t *testing.T) {
	const readers = 32
	const groups = 5
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM cvr (k BIGINT, v BIGINT) WITH (subject = 'e2e.cvr')",
		"CREATE MATERIALIZED VIEW cvr_total AS SELECT count(*) AS n, sum(v) AS s FROM cvr",
		fmt.Sprintf("CREATE MATERIALIZED VIEW cvr_groups AS SELECT k %% %d AS g, count(*) AS n, sum(v) AS s FROM cvr GROUP BY k %% %d", groups, groups),
		"CREATE MATERIALIZED VIEW cvr_rows AS SELECT k, v FROM cvr WHERE k % 7 = 0",
		"CREATE TABLE cvt (k BIGINT PRIMARY KEY, v BIGINT)",
		"CREATE MATERIALIZED VIEW cvt_total AS SELECT count(*) AS n, sum(v) AS s FROM cvt",
	)
	_, js := testutil.JetStream(t, srv.NATSURL())

	const total = 60000
	published := make(chan struct{})
	go func() {
		defer close(published)
		publishMany(t, js, "e2e.cvr", total, func(i int) string {
			return fmt.Sprintf(`{"k": %d, "v": %d}`, i, i)
		})
	}()

	// Rows arrive in the table too, acknowledged by streamdb, so that reads
	// of cvt_total wait for the epoch that holds them.
	var stop atomic.Bool
	inserted := make(chan error, 1)
	ins := srv.Conn(t)
	go func() {
		for i := 0; !stop.Load(); i++ {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := ins.Exec(ctx, fmt.Sprintf("INSERT INTO cvt VALUES (%d, %d)", i, i))
			cancel()
			if err != nil {
				inserted <- fmt.Errorf("INSERT %d: %w", i, err)
				return
			}
		}
		inserted <- nil
	}()
	var wg sync.WaitGroup
	var reads atomic.Int64
	errs := make(chan error, readers)
	for r := 0; r < readers; r++ {
		c := srv.Conn(t)
		wg.Add(1)
		go func(r int, c *pgx.Conn) {
			defer wg.Done()
			var lastTotal, lastGroups, lastRows, lastTable int64
			for i := 0; !stop.Load(); i++ {
				var err error
				switch (r + i) % 4 {
				case 0:
					lastTotal, err = readTotal(c, "cvr_total", lastTotal)
				case 3:
					lastTable, err = readTotal(c, "cvt_total", lastTable)
				case 1:
					lastGroups, err = readGroups(c, groups, lastGroups)
				case 2:
					lastRows, err = readRows(c, lastRows)
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d, read %d: %w", r, i, err)
					return
				}
				reads.Add(1)
			}
		}(r, c)
	}
	select {
	case <-published:
	case <-time.After(3 * time.Minute):
		t.Error("publishing did not finish in 3 minutes")
	}
	flush(t, conn)
	// Go on reading a while after the last event so every reader sees the end.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && len(errs) == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if err := <-inserted; err != nil {
		t.Error(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d reads", reads.Load())
	wantRows(t, conn, "SELECT n, s FROM cvr_total", fmt.Sprintf("%d %d", total, total*(total-1)/2))
	if !srv.Running() {
		t.Fatalf("server exited:\n%s", srv.Logs())
	}
}

func readText(c *pgx.Conn, sql string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return textRowsErr(ctx, c, sql)
}

// prefixSum is the sum of the events i < n with i % m == g.
func prefixSum(n, m, g int64) (count, sum int64) {
	for i := g; i < n; i += m {
		count++
		sum += i
	}
	return count, sum
}

// readTotal reads view, the count and sum of v over events with v = 0, 1, ...
func readTotal(c *pgx.Conn, view string, last int64) (int64, error) {
	rows, err := readText(c, "SELECT n, s FROM "+view)
	if err != nil {
		return last, err
	}
	if len(rows) == 0 {
		if last > 0 {
			return last, fmt.Errorf("%s empty after %d events", view, last)
		}
		return 0, nil
	}
	f := strings.Fields(rows[0])
	n, _ := strconv.ParseInt(f[0], 10, 64)
	want := fmt.Sprintf("%d %d", n, n*(n-1)/2)
	if n == 0 {
		want = "0 NULL"
	}
	if len(rows) != 1 || n < last || rows[0] != want {
		return last, fmt.Errorf("%s %v: not the total of a prefix of at least %d events", view, rows, last)
	}
	return n, nil
}

func readGroups(c *pgx.Conn, m int64, last int64) (int64, error) {
	rows, err := readText(c, "SELECT g, n, s FROM cvr_groups ORDER BY g")
	if err != nil {
		return last, err
	}
	var n int64
	for _, r := range rows {
		f := strings.Fields(r)
		v, _ := strconv.ParseInt(f[1], 10, 64)
		n += v
	}
	var want []string
	for g := int64(0); g < m; g++ {
		if cnt, sum := prefixSum(n, m, g); cnt > 0 {
			want = append(want, fmt.Sprintf("%d %d %d", g, cnt, sum))
		}
	}
	if n < last || fmt.Sprint(rows) != fmt.Sprint(want) {
		return last, fmt.Errorf("cvr_groups %v: not the groups of a prefix of at least %d events", rows, last)
	}
	return n, nil
}

func readRows(c *pgx.Conn, last int64) (int64, error) {
	rows, err := readText(c, "SELECT k, v FROM cvr_rows ORDER BY k")
	if err != nil {
		return last, err
	}
	n := int64(len(rows))
	for i, r := range rows {
		if r != fmt.Sprintf("%d %d", i*7, i*7) {
			return last, fmt.Errorf("cvr_rows row %d is %q: not the rows of a prefix", i, r)
		}
	}
	if n < last {
		return last, fmt.Errorf("cvr_rows has %d rows after %d", n, last)
	}
	return n, nil
}
