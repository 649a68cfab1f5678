package savepoint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestSavepointPortable: a savepoint directory copied into the fresh data
// directory of a second server, started with --restore-from and the same
// standalone NATS, gives views equal to the first server's at the
// savepoint; the second server then catches up with all input. The first
// server's copy is released before the second starts, so the copy must be
// self-contained.
func TestSavepointPortable(t *testing.T) {
	rng := seedFor(t)
	ref := newReference(t)
	natsURL := testutil.StartNATS(t)
	srv1 := testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL})
	c1 := srv1.Conn(t)

	queries := viewQueries()
	names := keys(queries)
	testutil.MustExec(t, c1, streamDDL("ev", "ev.portable"))
	for _, n := range names {
		testutil.MustExec(t, c1, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, queries[n]))
	}
	b1 := genRows(rng, 1, 300+rng.IntN(200))
	insert(t, c1, "ev", b1)
	testutil.MustExec(t, c1, "FLUSH", "SAVEPOINT sp")
	b2 := genRows(rng, 10_000, 200+rng.IntN(200))
	insert(t, c1, "ev", b2)
	testutil.MustExec(t, c1, "FLUSH")
	atSP := viewRows(t, c1, names, " AS OF SAVEPOINT sp")
	wantSP := ref.answer("ev", b1, queries)
	compareViews(t, "server 1 AS OF SAVEPOINT sp vs PostgreSQL", wantSP, atSP)

	spDir := filepath.Join(srv1.DataDir, "savepoints", "sp")
	if _, err := os.Stat(filepath.Join(spDir, "_metadata.json")); err != nil {
		t.Fatalf("savepoint directory: %v", err)
	}
	data2 := t.TempDir()
	copied := filepath.Join(data2, "savepoints", "sp")
	testutil.CopyDir(t, spDir, copied)
	testutil.MustExec(t, c1, "RELEASE SAVEPOINT sp")
	if _, err := os.Stat(spDir); !os.IsNotExist(err) {
		t.Errorf("RELEASE SAVEPOINT left %s: %v", spDir, err)
	}

	// A barrier interval of an hour keeps server 2 from committing any
	// epoch until the test shortens it: its views show the restored state.
	srv2 := testutil.StartServer(t, testutil.ServerOptions{
		NATSURL: natsURL,
		DataDir: data2,
		Args:    []string{"--restore-from", copied},
		Env:     []string{"STREAMDB_EXECUTION_BARRIER_INTERVAL=1h"},
	})
	c2 := srv2.Conn(t)
	if got := viewNames(t, c2); !slices.Equal(names, got) {
		t.Errorf("server 2 views: want %q, got %q", names, got)
	}
	compareViews(t, "server 2 right after --restore-from vs server 1 at the savepoint", atSP, viewRows(t, c2, names, ""))

	// The copy sits in server 2's savepoints directory, so it is listed
	// there and can be read AS OF.
	rows := mustQuery(t, c2, "SHOW SAVEPOINTS")
	if len(rows) != 1 || rows[0][0] != "sp" || !strings.HasPrefix(rows[0][5], data2) {
		t.Errorf("server 2 SHOW SAVEPOINTS: %q (want sp under %s)", rows, data2)
	}
	compareViews(t, "server 2 AS OF SAVEPOINT sp", atSP, viewRows(t, c2, names, " AS OF SAVEPOINT sp"))

	testutil.MustExec(t, c2, "SET execution.barrier.interval = '20ms'", "FLUSH")
	both := append(append([]row(nil), b1...), b2...)
	compareViews(t, "server 2 caught up vs PostgreSQL over all input", ref.answer("ev", both, queries), viewRows(t, c2, names, ""))

	// Input through either server reaches both.
	b3 := genRows(rng, 20_000, 100)
	insert(t, c2, "ev", b3[:50])
	insert(t, c1, "ev", b3[50:])
	testutil.MustExec(t, c1, "FLUSH")
	testutil.MustExec(t, c2, "FLUSH")
	want := ref.answer("ev", append(both, b3...), queries)
	compareViews(t, "server 1 after more input", want, viewRows(t, c1, names, ""))
	compareViews(t, "server 2 after more input", want, viewRows(t, c2, names, ""))

	// A restart (same flags, so from the savepoint again) replays to the
	// same answer.
	srv2.Restart(t)
	c2 = srv2.Conn(t)
	testutil.MustExec(t, c2, "SET execution.barrier.interval = '20ms'", "FLUSH")
	compareViews(t, "server 2 after a restart", want, viewRows(t, c2, names, ""))
}
