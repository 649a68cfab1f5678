package savepoint

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestRollbackInputGone: the JetStream stream keeps only the newest 8
// messages (created by the test before CREATE STREAM binds it). Rolling
// back to a savepoint whose replay would need messages JetStream has
// discarded fails with 55000 and changes nothing: catalog, view contents,
// savepoints, and the views keep consuming new input.
func TestRollbackInputGone(t *testing.T) {
	rng := seedFor(t)
	ref := newReference(t)
	natsURL := testutil.StartNATS(t)
	_, js := testutil.JetStream(t, natsURL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const subject = "ev.small"
	jsStream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "small_js", Subjects: []string{subject}, MaxMsgs: 8, Discard: jetstream.DiscardOld, Storage: jetstream.FileStorage,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL})
	conn := srv.Conn(t)
	queries := viewQueries()
	testutil.MustExec(t, conn, streamDDL("ev", subject))
	for _, n := range []string{"totals", "per_g", "g_max"} {
		testutil.MustExec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, queries[n]))
	}
	testutil.MustExec(t, conn, "FLUSH")

	var all []row
	add := func(n int) { // small batches, so that the views keep up with the trimming
		for n > 0 {
			k := min(n, 3)
			rows := genRows(rng, int64(len(all)+1), k)
			insert(t, conn, "ev", rows)
			testutil.MustExec(t, conn, "FLUSH")
			all = append(all, rows...)
			n -= k
		}
	}
	add(3)
	testutil.MustExec(t, conn, "SAVEPOINT sp")
	spWant := ref.answer("ev", all, subset(queries, "totals", "per_g", "g_max"))
	add(12)
	info, err := jsStream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.FirstSeq <= 4 {
		t.Fatalf("JetStream stream first sequence %d: the test needs message 4 discarded", info.State.FirstSeq)
	}
	testutil.MustExec(t, conn, "DROP MATERIALIZED VIEW g_max",
		"CREATE MATERIALIZED VIEW low_sum AS "+queries["low_sum"])

	snapshot := func() map[string][]string {
		s := viewRows(t, conn, viewNames(t, conn), "")
		s["(views)"] = viewNames(t, conn)
		s["(savepoints)"] = savepointNames(t, conn)
		return s
	}
	before := snapshot()
	ts := savepointTime(t, conn, "sp").Add(time.Millisecond).Format("2006-01-02 15:04:05.000000")
	tryRollback := func(what string, sqls ...string) {
		t.Helper()
		var err error
		for _, s := range sqls {
			if err = testutil.ExecSimple(conn, time.Minute, s); err != nil {
				break
			}
		}
		wantCode(t, err, "55000", what)
		compareViews(t, what+": nothing may change", before, snapshot())
	}
	tryRollback("ROLLBACK TO SAVEPOINT sp", "ROLLBACK TO SAVEPOINT sp")
	tryRollback("ROLLBACK TO TIMESTAMP just after sp", fmt.Sprintf("ROLLBACK TO TIMESTAMP '%s'", ts))
	testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE")
	tryRollback("paused ROLLBACK TO SAVEPOINT sp", "ROLLBACK TO SAVEPOINT sp")
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME")

	// Reading the savepoint needs no input.
	compareViews(t, "AS OF SAVEPOINT sp", spWant, viewRows(t, conn, []string{"totals", "per_g", "g_max"}, " AS OF SAVEPOINT sp"))

	// The views still run.
	add(4)
	live := ref.answer("ev", all, subset(queries, "totals", "per_g"))
	compareViews(t, "after the failed rollbacks, new input", live, viewRows(t, conn, []string{"totals", "per_g"}, ""))

}

// checkNoSilentLoss reports when views no longer equal the answer over all
// input after FLUSH (a rollback that replayed from a trimmed stream).
func checkNoSilentLoss(t *testing.T, conn *pgx.Conn, ref *reference, all []row, queries map[string]string) {
	t.Helper()
	testutil.MustExec(t, conn, "FLUSH")
	names := []string{"totals", "per_g"}
	compareViews(t, "after FLUSH vs PostgreSQL over all input (views must not silently lose input)",
		ref.answer("ev", all, subset(queries, names...)), viewRows(t, conn, names, ""))
}

// TestRollbackInputGoneFromStart: as TestRollbackInputGone, for a
// savepoint taken before the views had read anything (positions 0): its
// replay needs the stream from sequence 1, which JetStream has discarded,
// so the rollback must fail with 55000 and change nothing.
func TestRollbackInputGoneFromStart(t *testing.T) {
	rng := seedFor(t)
	ref := newReference(t)
	natsURL := testutil.StartNATS(t)
	_, js := testutil.JetStream(t, natsURL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const subject = "ev.small0"
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "small0_js", Subjects: []string{subject}, MaxMsgs: 8, Discard: jetstream.DiscardOld, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL})
	conn := srv.Conn(t)
	queries := viewQueries()
	testutil.MustExec(t, conn, streamDDL("ev", subject))
	for _, n := range []string{"totals", "per_g"} {
		testutil.MustExec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, queries[n]))
	}
	testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT sp_empty")
	var all []row
	for len(all) < 15 {
		rows := genRows(rng, int64(len(all)+1), 3)
		insert(t, conn, "ev", rows)
		testutil.MustExec(t, conn, "FLUSH")
		all = append(all, rows...)
	}
	names := []string{"totals", "per_g"}
	before := viewRows(t, conn, names, "")
	err := testutil.ExecSimple(conn, time.Minute, "ROLLBACK TO SAVEPOINT sp_empty")
	wantCode(t, err, "55000", "ROLLBACK TO SAVEPOINT sp_empty (positions 0; messages 1..7 discarded)")
	compareViews(t, "after the rollback that should have failed", before, viewRows(t, conn, names, ""))
	checkNoSilentLoss(t, conn, ref, all, queries)
}
