package savepoint

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestShutdownDuringSavepoint: SIGTERM while a savepoint (or a periodic
// checkpoint) is being written must still shut down cleanly (exit 0;
// testutil's Stop fails the test otherwise), and the restarted server must
// have its views and every savepoint that SAVEPOINT reported as taken.
// Periodic checkpoints run every 10ms here, so one is nearly always in
// flight.
func TestShutdownDuringSavepoint(t *testing.T) {
	rng := seedFor(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_EXECUTION_CHECKPOINTING_INTERVAL=10ms"}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.shutdown"),
		"CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"],
		"CREATE MATERIALIZED VIEW per_g AS "+viewQueries()["per_g"])
	all := genRows(rng, 1, 2000)
	insert(t, conn, "ev", all)
	testutil.MustExec(t, conn, "FLUSH")
	var taken []string
	for round := 0; round < 4; round++ {
		name := fmt.Sprintf("sp%d", round)
		res := make(chan error, 1)
		sc := srv.Conn(t)
		go func() { res <- testutil.ExecSimple(sc, time.Minute, "SAVEPOINT "+name) }()
		// The SIGTERM moment, chosen by the seed; any moment must be safe.
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		srv.Restart(t) // SIGTERM, wait for a clean exit, start again
		if err := <-res; err == nil {
			taken = append(taken, name)
		}
		conn = srv.Conn(t)
		got := savepointNames(t, conn)
		for _, n := range taken {
			found := false
			for _, g := range got {
				found = found || g == n
			}
			if !found {
				t.Errorf("round %d: savepoint %s was reported taken but is not listed after the restart: %q", round, n, got)
			}
		}
		testutil.MustExec(t, conn, "FLUSH")
		if got, want := mustRows(t, conn, "SELECT * FROM totals"), goAnswer("totals", all); !slices.Equal(want, got) {
			t.Errorf("round %d: totals after the restart: %s", round, diffRows(want, got))
		}
	}
}
