package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// jsState returns the stored message count and first sequence of the
// JetStream stream that holds subject.
func jsState(t *testing.T, js jetstream.JetStream, subject string) (msgs, first uint64) {
	t.Helper()
	ctx := testutil.Context(t, 30*time.Second)
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		t.Fatalf("JetStream stream of %s: %v", subject, err)
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("JetStream stream %s: %v", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("JetStream stream %s: %v", name, err)
	}
	return info.State.Msgs, info.State.FirstSeq
}

// pollDrained waits until JetStream holds at most max messages on
// subject (purges follow checkpoints, once a second by default).
func pollDrained(t *testing.T, js jetstream.JetStream, subject string, max uint64) {
	t.Helper()
	testutil.Poll(t, 60*time.Second, "purge of "+subject, func() error {
		if n, first := jsState(t, js, subject); n > max {
			return fmt.Errorf("%d messages stored from sequence %d, want at most %d", n, first, max)
		}
		return nil
	})
}

// purgePassed waits until a purge has run with every view past what was
// published so far: a message published now to a new stream named after
// tag, which nothing else holds back (no savepoint has a position on it),
// is purged from it.
func purgePassed(t *testing.T, conn *pgx.Conn, js jetstream.JetStream, tag string) {
	t.Helper()
	m := "purge_marker_" + tag
	exec(t, conn,
		"CREATE STREAM "+m+" (k int) WITH (retention = 'consumed')",
		"CREATE MATERIALIZED VIEW "+m+"_n AS SELECT count(*) AS n FROM "+m)
	testutil.Publish(t, js, m, `{"k":1}`)
	flush(t, conn)
	pollDrained(t, js, m, 0)
}

// TestTruncateConsumedStream: a stream WITH (retention = 'consumed') is
// purged below what its views and retained checkpoints and savepoints have
// read, views stay exact through purges, kill -9, ROLLBACK TO SAVEPOINT;
// a stream without the option keeps every message; and a restore from a
// copied savepoint whose input was purged refuses to serve with 55000.
func TestTruncateConsumedStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		"CREATE STREAM ev (k int, v bigint) WITH (retention = 'consumed')",
		"CREATE STREAM kept (k int, v bigint)",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k",
		"CREATE MATERIALIZED VIEW kept_agg AS SELECT count(*) AS n, sum(v) AS s FROM kept",
	)
	wantExecCode(t, conn, "CREATE STREAM bad (k int) WITH (retention = 'forever')", "22023")
	wantExecCode(t, conn, "CREATE TABLE bad (k int) WITH (retention = 'consumed')", "22023")

	// Expected view rows, kept in Go.
	counts, sums := map[int]int64{}, map[int]int64{}
	total := 0
	round := func(n int) {
		t.Helper()
		msg := func(i int) string {
			k, v := (total+i)%7, int64(total+i)
			return fmt.Sprintf(`{"k":%d,"v":%d}`, k, v)
		}
		publishMany(t, js, "ev", n, msg)
		publishMany(t, js, "kept", n, msg)
		for i := 0; i < n; i++ {
			counts[(total+i)%7]++
			sums[(total+i)%7] += int64(total + i)
		}
		total += n
		flush(t, conn)
	}
	want := func() []string {
		var out []string
		for k := 0; k < 7; k++ {
			if counts[k] > 0 {
				out = append(out, fmt.Sprintf("%d %d %d", k, counts[k], sums[k]))
			}
		}
		return out
	}
	check := func(when string) {
		t.Helper()
		if got := textRows(t, conn, "SELECT k, n, s FROM agg ORDER BY k"); !slices.Equal(got, want()) {
			t.Fatalf("%s: agg\n got %q\nwant %q", when, got, want())
		}
	}

	round(3000)
	check("first round")
	pollDrained(t, js, "ev", 0)

	// A savepoint holds the purge back at its position until released.
	exec(t, conn, "SAVEPOINT before_more")
	held := uint64(total)
	for i := 0; i < 3; i++ {
		round(2000)
		check(fmt.Sprintf("round %d", i+2))
	}
	// Once a purge has run with every view past the rounds, ev is purged
	// up to the savepoint and no further.
	purgePassed(t, conn, js, "after_rounds")
	// ev's messages are sequences 1..total of its own JetStream stream.
	if n, first := jsState(t, js, "ev"); first != held+1 || n != uint64(total)-held {
		t.Fatalf("ev after purges with a savepoint: first sequence %d with %d messages, want %d with %d", first, n, held+1, uint64(total)-held)
	}
	// A copy of the savepoint outside the server's directories is not
	// retained by it.
	outside := filepath.Join(t.TempDir(), "before_more")
	testutil.CopyDir(t, filepath.Join(srv.DataDir, "savepoints", "before_more"), outside)

	exec(t, conn, "ROLLBACK TO SAVEPOINT before_more")
	flush(t, conn)
	check("after ROLLBACK TO SAVEPOINT")
	exec(t, conn, "RELEASE SAVEPOINT before_more")
	pollDrained(t, js, "ev", 0)

	// kill -9 after the purge: recovery replays from a retained
	// checkpoint, whose input is still there.
	round(1000)
	pollDrained(t, js, "ev", 0)
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	flush(t, conn)
	check("after kill -9")
	round(500)
	check("after restart and more input")

	// The stream without the option keeps everything.
	if n, first := jsState(t, js, "kept"); n != uint64(total) || first != 1 {
		t.Errorf("stream kept: %d messages from %d, want %d from 1", n, first, total)
	}
	wantRows(t, conn, "SELECT n, s FROM kept_agg", fmt.Sprintf("%d %d", total, int64(total)*int64(total-1)/2))

	// Restoring the copied savepoint needs input that was purged: the view
	// refuses to serve, naming the gone range, instead of answering.
	srv.Stop(t)
	restored := testutil.StartServer(t, testutil.ServerOptions{DataDir: srv.DataDir, Args: []string{"--restore-from", outside}})
	rc := restored.Conn(t)
	testutil.Poll(t, 30*time.Second, "the restored view stops", func() error {
		_, err := textRowsErr(testutil.Context(t, 10*time.Second), rc, "SELECT k, n, s FROM agg ORDER BY k")
		if err == nil {
			return fmt.Errorf("the view still answers")
		}
		return nil
	})
	_, err := textRowsErr(testutil.Context(t, 10*time.Second), rc, "SELECT k, n, s FROM agg ORDER BY k")
	if pe := wantCode(t, err, "55000"); pe != nil && !strings.Contains(pe.Message, "are gone") {
		t.Errorf("error does not name the missing input: %s", pe.Message)
	}
}
