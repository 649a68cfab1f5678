package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// BenchmarkTableHistory (issue 24 item 4): a table of 1,000 rows takes
// 100k row updates, then a fresh table takes many more (1M in quick mode,
// 10M in full; BENCH_TABLE_UPDATES overrides the second). For each it
// reports, once the purges that follow checkpoints have caught up, the
// bytes JetStream keeps for the table's changelog, and the time a CREATE
// MATERIALIZED VIEW over the table takes to return (it returns once the
// view holds the table's rows), and the ratios between the two runs: a
// table's storage and a new view's start should follow its size, not its
// history. Updates are statements of 100 rows each from 8 sessions.
func BenchmarkTableHistory(b *testing.B) {
	big := 1_000_000
	if report.Mode == "full" {
		big = 10_000_000
	}
	if s := os.Getenv("BENCH_TABLE_UPDATES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100_000 {
			b.Fatalf("BENCH_TABLE_UPDATES=%q: want a number of at least 100000", s)
		}
		big = n
	}
	report.Configf("TableHistory: a keyed table of 1,000 rows, 100k and then %d row updates (UPDATE of 100 rows per statement, 8 sessions), checkpoints every second (the default)", big)
	sdb := startServer(b, "", nil)
	_, js := testutil.JetStream(b, sdb.NATSURL())
	type result struct {
		updates    int
		statements int
		published  uint64 // changelog messages ever written
		bytes      uint64 // bytes JetStream keeps for the changelog
		msgs       uint64
		peakBytes  uint64 // most bytes kept while the updates ran (sampled)
		peakMsgs   uint64
		create     time.Duration
		took       time.Duration
	}
	run := func(updates int) result {
		table := fmt.Sprintf("hist_%d", updates)
		conn := sdb.Conn(b)
		execTimed(b, conn, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, v bigint, pad text)", table))
		var vals []string
		for i := 0; i < 1000; i++ {
			vals = append(vals, fmt.Sprintf("(%d, 0, 'row %d of a table that takes many updates')", i, i))
		}
		execTimed(b, conn, fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(vals, ", ")))
		subject := "streamdb.table." + table
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
		defer cancel()
		name, err := js.StreamNameBySubject(ctx, subject)
		if err != nil {
			b.Fatal(err)
		}
		stream, err := js.Stream(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		var r result
		// Sample what JetStream keeps while the updates run.
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if info, err := stream.Info(ctx); err == nil {
					r.peakBytes = max(r.peakBytes, info.State.Bytes)
					r.peakMsgs = max(r.peakMsgs, info.State.Msgs)
				}
			}
		}()
		statements := updates / 100
		start := time.Now()
		tableUpdates(b, sdb.DSN(), table, statements, 8)
		took := time.Since(start)
		close(stop)
		<-sampled
		execTimed(b, conn, "FLUSH")

		testutil.Poll(b, 2*time.Minute, "purge of "+table, func() error {
			info, err := stream.Info(ctx)
			if err != nil {
				return err
			}
			r.published, r.bytes, r.msgs = info.State.LastSeq, info.State.Bytes, info.State.Msgs
			if r.msgs > 0 {
				return fmt.Errorf("%d of %d changelog messages still kept (%d bytes)", r.msgs, r.published, r.bytes)
			}
			return nil
		})
		r.updates, r.statements, r.took = updates, statements, took
		r.create = execTimed(b, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s_v AS SELECT count(*) AS n, sum(v) AS s FROM %s", table, table))
		n := queryInt(b, conn, fmt.Sprintf("SELECT n FROM %s_v", table))
		s := queryInt(b, conn, fmt.Sprintf("SELECT s FROM %s_v", table))
		if n != 1000 || s != int64(updates) {
			b.Fatalf("view over %s: %d rows summing to %d, want 1000 summing to %d", table, n, s, updates)
		}
		return r
	}
	small, large := run(100_000), run(big)
	var t strings.Builder
	t.WriteString("| row updates | statements | update time | changelog messages written | most messages kept during updates | most bytes kept during updates | messages kept after | bytes kept after | CREATE MATERIALIZED VIEW |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range []result{small, large} {
		fmt.Fprintf(&t, "| %d | %d | %.1f s | %d | %d | %d | %d | %d | %.1f ms |\n", r.updates, r.statements, r.took.Seconds(), r.published, r.peakMsgs, r.peakBytes, r.msgs, r.bytes, ms(r.create))
		cas := fmt.Sprintf("%d updates", r.updates)
		report.Add("TableHistory", cas, "JetStream bytes kept after the updates", float64(r.bytes), "bytes")
		report.Add("TableHistory", cas, "most JetStream bytes kept during the updates", float64(r.peakBytes), "bytes")
		report.Add("TableHistory", cas, "CREATE MATERIALIZED VIEW", ms(r.create), "ms")
	}
	bytesRatio := float64(large.peakBytes+1) / float64(small.peakBytes+1)
	createRatio := large.create.Seconds() / small.create.Seconds()
	fmt.Fprintf(&t, "\nRatios %d / 100k updates: most JetStream bytes kept during the updates %.2f, CREATE time %.2f.\n", big, bytesRatio, createRatio)
	report.Add("TableHistory", "ratio", "most JetStream bytes kept during updates, large / small", bytesRatio, "x")
	report.Add("TableHistory", "ratio", "CREATE MATERIALIZED VIEW time, large / small", createRatio, "x")
	report.AddSection("Table storage follows its size, not its history", t.String())
	fmt.Print(t.String())
}

// tableUpdates runs statements UPDATEs of 100 rows each of table (ids
// 0..999) from sessions connections.
func tableUpdates(b *testing.B, dsn, table string, statements, sessions int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	update := fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE id >= $1 AND id < $1 + 100", table)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for w := 0; w < sessions; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(context.Background())
			for i := w; i < statements; i += sessions {
				if _, err := c.Exec(ctx, update, (i%10)*100); err != nil {
					errs <- fmt.Errorf("%s: %w", update, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
