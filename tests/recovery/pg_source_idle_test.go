package recovery

import (
	"context"
	"fmt"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPGSourceAppliedMeansVisible: when streamdb_sources says a source
// position is applied, every source transaction that ends at or before
// it is in the mirror, and stays there. An idle applier moves its
// position up to where the source has sent everything; the fault point
// pgsource-idle-confirm holds it 3 s between seeing the source idle and
// committing that position, while source transactions keep arriving. The
// position it commits must be the one the source was idle at: a position
// read after the pause covers transactions received meanwhile and not
// applied, which the applier would then skip as held (and confirm to the
// slot), so the mirror would miss them for good.
func TestPGSourceAppliedMeansVisible(t *testing.T) {
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE idle_t (id int PRIMARY KEY, v int NOT NULL)",
		"CREATE PUBLICATION idle_pub FOR TABLE idle_t")
	srv := startServer(t, testutil.ServerOptions{
		Env: []string{"STREAMDB_FAULT_DURATIONS=pgsource-idle-confirm=3s"},
	})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, fmt.Sprintf("CREATE SOURCE idle_src FROM POSTGRES (CONNECTION '%s', PUBLICATION 'idle_pub') FOR ALL TABLES", pg.DSN()))
	waitSourceCaughtUp(t, src, conn, "the source to start")

	// Bursts of small transactions, each after the source was idle and
	// the applier caught up, so that they arrive while it is held at the
	// fault point.
	id := 0
	for round := range 6 {
		for range 20 {
			id++
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := src.Exec(ctx, fmt.Sprintf("BEGIN; INSERT INTO idle_t VALUES (%d, 0); UPDATE idle_t SET v = v + 1 WHERE id = %d; COMMIT", id, 1+(id*7919)%id))
			cancel()
			if err != nil {
				t.Fatalf("source transaction: %v", err)
			}
		}
		waitSourceCaughtUp(t, src, conn, fmt.Sprintf("the source to apply round %d", round))
	}
	q := "SELECT id, v FROM idle_t ORDER BY id"
	cols, want := mustQuery(t, src, q)
	_, got := mustQuery(t, conn, q)
	if d := diffRows(cols, want, got, nil); d != "" {
		// Late or lost: a lost transaction was confirmed to the slot, which
		// never sends it again.
		late := false
		for deadline := time.Now().Add(2 * time.Minute); !late && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			_, got, err := queryText(conn, time.Minute, q)
			late = err == nil && diffRows(cols, want, got, nil) == ""
		}
		t.Fatalf("streamdb_sources says the source's position is applied, but the mirror differs from the source (%d rows, source %d; shown later: %v): %s", len(got), len(want), late, d)
	}
}
