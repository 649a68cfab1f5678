package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// fetchFeed runs a FETCH and returns its rows as feed rows.
func fetchFeed(t *testing.T, conn *pgx.Conn, sql string) []feedRow {
	t.Helper()
	rows, err := conn.Query(testutil.Context(t, time.Minute), sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var out []feedRow
	ch, done := make(chan feedRow, 1<<16), make(chan error, 1)
	readFeed(rows, ch, done)
	if err := <-done; err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	close(ch)
	for r := range ch {
		out = append(out, r)
	}
	return out
}

// TestSubscribeCursor: DECLARE c CURSOR FOR SUBSCRIBE; FETCH n c returns at
// most n rows of the feed, FETCH ALL c WITH (timeout) what arrived within
// the timeout (nothing for an idle view), and the rows fetched rebuild
// the view; CLOSE ends the cursor.
func TestSubscribeCursor(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'cur.s')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, sum(v) AS total FROM s GROUP BY k")
	publishMany(t, js, "cur.s", 100, func(i int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, i%10, i) })
	flush(t, conn)

	c := srv.Conn(t)
	exec(t, c, "BEGIN", "DECLARE feed CURSOR FOR SUBSCRIBE agg")
	m := &feedModel{t: t, counts: map[string]int64{}}
	first := fetchFeed(t, c, "FETCH 4 feed")
	if len(first) != 4 {
		t.Fatalf("FETCH 4 returned %d rows", len(first))
	}
	for _, r := range append(first, fetchFeed(t, c, "FETCH ALL feed WITH (timeout = '1s')")...) {
		m.apply(r)
	}
	want := sortedText(t, conn, "SELECT * FROM agg")
	if got := m.rows(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("snapshot %v, view %v", got, want)
	}
	if got := fetchFeed(t, c, "FETCH ALL feed WITH (timeout = '200ms')"); len(got) != 0 {
		t.Fatalf("an idle view's FETCH returned %v", got)
	}
	publishMany(t, js, "cur.s", 50, func(i int) string { return fmt.Sprintf(`{"k": %d, "v": 1}`, i%20) })
	flush(t, conn)
	want = sortedText(t, conn, "SELECT * FROM agg")
	poll(t, time.Minute, func() error {
		for _, r := range fetchFeed(t, c, "FETCH ALL feed WITH (timeout = '1s')") {
			m.apply(r)
		}
		if got := m.rows(); strings.Join(got, "|") != strings.Join(want, "|") {
			return fmt.Errorf("feed %v, view %v", got, want)
		}
		return nil
	})
	exec(t, c, "CLOSE feed", "COMMIT")
	_, err := c.Exec(testutil.Context(t, time.Minute), "FETCH 1 feed", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "34000")
	_, err = c.Exec(testutil.Context(t, time.Minute), "DECLARE q CURSOR FOR SELECT * FROM agg", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "25P01") // a query cursor outside a transaction block
	wantRows(t, c, "SELECT count(*) FROM agg", strconv.Itoa(20))
}

// TestSubscribeExtended: SUBSCRIBE over the extended protocol (pgx's
// default: Parse, Describe, Execute) describes its columns and streams the
// snapshot and then changes until the context is cancelled.
func TestSubscribeExtended(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE kv (k int PRIMARY KEY, v int)",
		"INSERT INTO kv VALUES (1, 10), (2, 20)",
		"CREATE MATERIALIZED VIEW m AS SELECT k, v FROM kv")
	sconn := srv.Conn(t)
	ctx, cancel := context.WithCancel(testutil.Context(t, time.Minute))
	defer cancel()
	rows, err := sconn.Query(ctx, "SUBSCRIBE TO m")
	if err != nil {
		t.Fatal(err)
	}
	ch, done, m := startFeed(t, rows)
	waitModel(t, m, ch, done, []string{"1 10", "2 20"})
	exec(t, conn, "UPDATE kv SET v = 21 WHERE k = 2", "DELETE FROM kv WHERE k = 1")
	waitModel(t, m, ch, done, []string{"2 21"})
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the feed ended without an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the feed did not end after its context was cancelled")
	}
}
