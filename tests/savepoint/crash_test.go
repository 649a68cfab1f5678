package savepoint

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestRollbackThenKill: kill -9 right after ROLLBACK TO SAVEPOINT returns,
// and at random moments while it runs. The restarted server is in one of
// the two states, never a mix: before the rollback (views created after the
// savepoint present, dropped ones absent, contents over all input) or after
// it (the savepoint's catalog and contents). Once ROLLBACK has returned, it
// must be the state after. Then FLUSH brings every view to PostgreSQL's
// answer over all input.
//
// Restarted servers run with a barrier interval of an hour until the test
// shortens it, so the recovered state can be read before any replay. In
// rounds where the rollback ran between PAUSE and RESUME the state after it
// is exactly the savepoint's; with sources running, the checkpoint that
// records the rollback may already hold part of the replay, so each view
// must equal its answer over some prefix of the input that is at least the
// savepoint's.
func TestRollbackThenKill(t *testing.T) {
	rng := seedFor(t)
	ref := newReference(t)
	natsURL := testutil.StartNATS(t)
	dataDir := t.TempDir()
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL, DataDir: dataDir})
	conn := srv.Conn(t)

	queries := viewQueries()
	testutil.MustExec(t, conn, streamDDL("ev", "ev.crash"))
	for _, n := range []string{"totals", "per_g", "g_max"} {
		testutil.MustExec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, queries[n]))
	}
	all := genRows(rng, 1, 200+rng.IntN(200))
	insert(t, conn, "ev", all)
	testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT sp")
	postCatalog := []string{"g_max", "per_g", "totals"}
	preCatalog := []string{"low_sum", "per_g", "totals"}
	postState := ref.answer("ev", all, subset(queries, postCatalog...))
	for _, v := range postCatalog { // the Go model of the views agrees with PostgreSQL
		if g := goAnswer(v, all); !slices.Equal(postState[v], g) {
			t.Fatalf("goAnswer(%s) disagrees with PostgreSQL: %s", v, diffRows(postState[v], g))
		}
	}
	spLen := len(all)
	_, js := testutil.JetStream(t, natsURL)

	nextID := int64(10_000)
	for round := 0; round < 4; round++ {
		// Move away from the savepoint: more input, a new view, a drop.
		more := genRows(rng, nextID, 50+rng.IntN(100))
		nextID += 1000
		insert(t, conn, "ev", more)
		all = append(all, more...)
		testutil.MustExec(t, conn, "FLUSH",
			"CREATE MATERIALIZED VIEW low_sum AS "+queries["low_sum"],
			"DROP MATERIALIZED VIEW g_max", "FLUSH")
		preState := ref.answer("ev", all, subset(queries, preCatalog...))
		compareViews(t, fmt.Sprintf("round %d before the rollback", round), preState, viewRows(t, conn, preCatalog, ""))

		returned := false
		paused := round == 0 || (round > 1 && rng.IntN(2) == 0)
		if paused {
			testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE")
		}
		if round < 2 {
			testutil.MustExec(t, conn, "ROLLBACK TO SAVEPOINT sp")
			returned = true
			srv.Kill(t)
		} else {
			delay := time.Duration(rng.IntN(150)) * time.Millisecond
			res := make(chan error, 1)
			go func() { res <- testutil.ExecSimple(conn, time.Minute, "ROLLBACK TO SAVEPOINT sp") }()
			time.Sleep(delay) // the kill moment, chosen by the seed; any moment must be safe
			srv.Kill(t)
			err := <-res
			returned = err == nil
			t.Logf("round %d: killed %v after ROLLBACK started (paused %v; it returned: %v, err %v)", round, delay, paused, returned, err)
		}

		srv = testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL, DataDir: dataDir,
			Env: []string{"STREAMDB_EXECUTION_BARRIER_INTERVAL=1h"}})
		conn = srv.Conn(t)
		got := viewNames(t, conn)
		switch {
		case slices.Equal(postCatalog, got) && paused:
			compareViews(t, fmt.Sprintf("round %d: restarted after the paused rollback", round), postState, viewRows(t, conn, postCatalog, ""))
			t.Logf("round %d: restarted in the state after the rollback", round)
		case slices.Equal(postCatalog, got):
			msgs := streamMessages(t, js, "ev.crash")
			for v, rows := range viewRows(t, conn, postCatalog, "") {
				if p := prefixLen(v, rows, msgs, spLen); p < 0 {
					t.Errorf("round %d: restarted after the rollback, view %s is no state over a prefix of at least %d messages: %q", round, v, spLen, clip(rows))
				} else {
					t.Logf("round %d: restarted after the rollback; %s had replayed %d messages", round, v, p-spLen)
				}
			}
		case slices.Equal(preCatalog, got) && !returned:
			compareViews(t, fmt.Sprintf("round %d: restarted before the rollback", round), preState, viewRows(t, conn, preCatalog, ""))
			t.Logf("round %d: restarted in the state before the rollback", round)
		case slices.Equal(preCatalog, got):
			t.Errorf("round %d: ROLLBACK returned, but the restarted server has the catalog from before it: %q", round, got)
		default:
			t.Fatalf("round %d: restarted with views %q: neither %q (before) nor %q (after)", round, got, preCatalog, postCatalog)
		}
		testutil.MustExec(t, conn, "SET execution.barrier.interval = '20ms'", "FLUSH")
		compareViews(t, fmt.Sprintf("round %d: after FLUSH vs PostgreSQL over all input", round),
			ref.answer("ev", all, subset(queries, got...)), viewRows(t, conn, got, ""))
		if sp := savepointNames(t, conn); !slices.Equal([]string{"sp"}, sp) {
			t.Fatalf("round %d: SHOW SAVEPOINTS: %q", round, sp)
		}
		if strings.Join(got, ",") == strings.Join(preCatalog, ",") {
			// Get back to the savepoint's catalog for the next round.
			testutil.MustExec(t, conn, "ROLLBACK TO SAVEPOINT sp", "FLUSH")
		}
	}
}
