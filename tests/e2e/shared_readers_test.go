package e2e

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	streamexec "streamdb/exec"
	"streamdb/tests/testutil"
)

// Views over one stream share one JetStream reader (issue 17 item 1): the
// tests below count the JetStream consumers on the stream, and check every
// view's rows exactly against what was published, with views created
// before and while messages arrive, a view dropped, and a crash.

// sharedEvent is message i of the shared-reader tests: k = i, v = i*3+1,
// and every badEvery-th message malformed.
func sharedEvent(i int) string {
	if i%badEvery == badEvery-1 {
		return fmt.Sprintf(`{"k": "not a number %d"}`, i)
	}
	return fmt.Sprintf(`{"k": %d, "v": %d}`, i, i*3+1)
}

const badEvery = 997

// sharedView is view number m: per k % m, the count and the sum of v.
func sharedView(m int) string {
	return fmt.Sprintf("CREATE MATERIALIZED VIEW sv%d AS SELECT k %% %d AS g, count(*) AS n, sum(v) AS s FROM sh GROUP BY k %% %d", m, m, m)
}

// wantSharedView checks view m against messages 0..n-1.
func wantSharedView(t *testing.T, conn *pgx.Conn, m, n int) {
	t.Helper()
	cnt := make([]int64, m)
	sum := make([]int64, m)
	for i := 0; i < n; i++ {
		if i%badEvery == badEvery-1 {
			continue
		}
		cnt[i%m]++
		sum[i%m] += int64(i*3 + 1)
	}
	var want []string
	for g := 0; g < m; g++ {
		if cnt[g] > 0 {
			want = append(want, fmt.Sprintf("%d %d %d", g, cnt[g], sum[g]))
		}
	}
	got := textRows(t, conn, fmt.Sprintf("SELECT g, n, s FROM sv%d ORDER BY g", m))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sv%d after %d messages:\n got %v\nwant %v", m, n, got, want)
	}
}

// consumers returns how many JetStream consumers read the stream of subject.
func consumers(t *testing.T, js jetstream.JetStream, subject string) (int, error) {
	t.Helper()
	ctx := testutil.Context(t, 10*time.Second)
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return 0, err
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Consumers, nil
}

// deleteConsumers deletes every JetStream consumer of subject's stream.
func deleteConsumers(t *testing.T, js jetstream.JetStream, subject string) {
	t.Helper()
	ctx := testutil.Context(t, 10*time.Second)
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	names := s.ConsumerNames(ctx)
	for c := range names.Name() {
		if err := s.DeleteConsumer(ctx, c); err != nil {
			t.Fatalf("deleting consumer %s: %v", c, err)
		}
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
}

// readersFor is how many JetStream consumers n view inputs on one subject
// use: one while readers merge (streamexec.SharedReaderMerging), else one each.
func readersFor(n int) int {
	if streamexec.SharedReaderMerging || n == 0 {
		return min(n, 1)
	}
	return n
}

// waitConsumers polls until the stream of subject has want consumers.
func waitConsumers(t *testing.T, js jetstream.JetStream, subject string, want int) {
	t.Helper()
	poll(t, 60*time.Second, func() error {
		n, err := consumers(t, js, subject)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("%d JetStream consumers on %s, want %d", n, subject, want)
		}
		return nil
	})
}

// publishRange publishes messages from..to-1 asynchronously.
func publishRange(t *testing.T, js jetstream.JetStream, from, to int) {
	t.Helper()
	publishMany(t, js, "e2e.sh", to-from, func(i int) string { return sharedEvent(from + i) })
}

// TestSharedReaderViews creates four views, then four more while messages
// arrive, and checks that each holds exactly what was published, that one
// JetStream consumer serves them all once they caught up, that dropping
// one leaves the others updating, and that the last DROP stops the reader.
// The seed (E2E_SEED) decides how many messages are published before each
// of the later CREATEs.
func TestSharedReaderViews(t *testing.T) {
	rng := rand.New(rand.NewSource(int64(testutil.Seed(t, "E2E_SEED"))))
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM sh (k BIGINT, v BIGINT) WITH (subject = 'e2e.sh')")
	for m := 2; m <= 5; m++ {
		exec(t, conn, sharedView(m))
	}
	waitConsumers(t, js, "e2e.sh", readersFor(4))

	// Publish while four more views are created: each CREATE runs while
	// the batches published before it are still being read.
	const first = 40000
	var wg sync.WaitGroup
	published := 0
	for m := 6; m <= 9; m++ {
		batch := 2000 * (1 + rng.Intn(4))
		if m == 9 {
			batch = first - published
		}
		from := published
		published += batch
		wg.Add(1)
		go func() {
			defer wg.Done()
			publishRange(t, js, from, from+batch)
		}()
		exec(t, conn, sharedView(m))
	}
	wg.Wait()
	flush(t, conn)
	for m := 2; m <= 9; m++ {
		wantSharedView(t, conn, m, first)
	}
	if got := mustInt(t, showStream(t, conn, "sh")["skipped_messages"]); got != first/badEvery {
		t.Errorf("skipped_messages = %d, want %d", got, first/badEvery)
	}
	waitConsumers(t, js, "e2e.sh", readersFor(8))

	// Dropping one view leaves the others reading.
	exec(t, conn, "DROP MATERIALIZED VIEW sv4")
	const second = 50000
	publishRange(t, js, first, second)
	flush(t, conn)
	for m := 2; m <= 9; m++ {
		if m != 4 {
			wantSharedView(t, conn, m, second)
		}
	}
	waitConsumers(t, js, "e2e.sh", readersFor(7))

	for m := 2; m <= 9; m++ {
		if m != 4 {
			exec(t, conn, fmt.Sprintf("DROP MATERIALIZED VIEW sv%d", m))
		}
	}
	waitConsumers(t, js, "e2e.sh", readersFor(0))
}

// TestSharedReaderCrash kills the server (kill -9) while eight views
// catch up on a backlog, one of them created during it, restarts it, and
// checks that every view is exact after more input, read by one consumer.
func TestSharedReaderCrash(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM sh (k BIGINT, v BIGINT) WITH (subject = 'e2e.sh')")
	for m := 2; m <= 8; m++ {
		exec(t, conn, sharedView(m))
	}
	exec(t, conn, "ALTER SYSTEM PAUSE")
	const first = 60000
	publishRange(t, js, 0, first)
	exec(t, conn, "ALTER SYSTEM RESUME")
	exec(t, conn, sharedView(9))
	// Crash once some epochs over the backlog have committed.
	poll(t, 60*time.Second, func() error {
		rows := textRows(t, conn, "SELECT coalesce(sum(n), 0) FROM sv2")
		if len(rows) != 1 || rows[0] == "0" {
			return fmt.Errorf("sv2 has no rows yet")
		}
		return nil
	})
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	_, js = testutil.JetStream(t, srv.NATSURL())
	const second = 70000
	publishRange(t, js, first, second)
	flush(t, conn)
	for m := 2; m <= 9; m++ {
		wantSharedView(t, conn, m, second)
	}
	waitConsumers(t, js, "e2e.sh", readersFor(8))
	// The restarted views keep updating through the one reader.
	publishRange(t, js, second, second+1000)
	flush(t, conn)
	for m := 2; m <= 9; m++ {
		wantSharedView(t, conn, m, second+1000)
	}
}

// TestSharedReaderMergeAtStart creates eight views on an empty stream,
// kills the server before any message, publishes a backlog and restarts
// it: every view restarts from the checkpoint at position 0 with a reader
// of its own, the readers merge before taking a message (limit 0), and
// each view must still see every message exactly once.
func TestSharedReaderMergeAtStart(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: testutil.StartNATS(t)})
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM sh (k BIGINT, v BIGINT) WITH (subject = 'e2e.sh')")
	for m := 2; m <= 9; m++ {
		exec(t, conn, sharedView(m))
	}
	exec(t, conn, "CHECKPOINT")
	srv.Kill(t)
	// The killed server's consumer would linger until JetStream's
	// inactivity threshold; delete it so the count below sees only the
	// restarted server's readers.
	deleteConsumers(t, js, "e2e.sh")
	const n = 60000
	publishRange(t, js, 0, n)
	srv.Restart(t)
	conn = srv.Conn(t)
	flush(t, conn)
	for m := 2; m <= 9; m++ {
		wantSharedView(t, conn, m, n)
	}
	_, js = testutil.JetStream(t, srv.NATSURL())
	waitConsumers(t, js, "e2e.sh", readersFor(8))
}
