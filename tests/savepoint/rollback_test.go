package savepoint

import (
	"fmt"
	"slices"
	"testing"

	"streamdb/tests/testutil"
)

// TestPausedRollback: input, SAVEPOINT, more input, a new view, a dropped
// view, ALTER SYSTEM PAUSE, more input, ROLLBACK TO SAVEPOINT. While paused
// the views equal their state at the savepoint exactly (as read AS OF the
// savepoint before the rollback, and as PostgreSQL computes over the input
// up to the savepoint), the new view is gone and the dropped one is back.
// After RESUME and FLUSH every view equals PostgreSQL's answer over all input.
func TestPausedRollback(t *testing.T) {
	rng := seedFor(t)
	ref := newReference(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)

	queries := viewQueries()
	kept := []string{"totals", "per_g", "big", "parity"}
	testutil.MustExec(t, conn, streamDDL("ev", "ev.paused"))
	for _, n := range append(kept, "g_max") {
		testutil.MustExec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, queries[n]))
	}
	atSP := append(kept, "g_max") // views of the savepoint's catalog

	b1 := genRows(rng, 1, 300+rng.IntN(200))
	insert(t, conn, "ev", b1)
	testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT sp")

	b2 := genRows(rng, 10_000, 200+rng.IntN(200))
	insert(t, conn, "ev", b2)
	testutil.MustExec(t, conn, "FLUSH",
		"CREATE MATERIALIZED VIEW low_sum AS "+queries["low_sum"],
		"DROP MATERIALIZED VIEW g_max")

	// AS OF reads the savepoint's state and catalog without restoring.
	asOf := viewRows(t, conn, atSP, " AS OF SAVEPOINT sp")
	wantSP := ref.answer("ev", b1, subset(queries, atSP...))
	compareViews(t, "AS OF SAVEPOINT sp vs PostgreSQL over the input up to the savepoint", wantSP, asOf)
	_, err := rowsErr(conn, "SELECT * FROM low_sum AS OF SAVEPOINT sp")
	wantCode(t, err, "42P01", "a view created after the savepoint, read AS OF it")
	_, err = rowsErr(conn, "SELECT * FROM g_max")
	wantCode(t, err, "42P01", "dropped view before the rollback")

	testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE")
	b3 := genRows(rng, 20_000, 100+rng.IntN(100))
	insert(t, conn, "ev", b3) // published while paused: replayed after RESUME

	testutil.MustExec(t, conn, "ROLLBACK TO SAVEPOINT sp")
	if got, want := viewNames(t, conn), sortedCopy(atSP); !slices.Equal(want, got) {
		t.Errorf("views after the rollback: want %q, got %q", want, got)
	}
	_, err = rowsErr(conn, "SELECT * FROM low_sum")
	wantCode(t, err, "42P01", "a view created after the savepoint, after the rollback")

	// Paused: the views hold exactly the savepoint's state, and keep it
	// across epochs.
	for i := 0; i < 3; i++ {
		got := viewRows(t, conn, atSP, "")
		if !compareViews(t, fmt.Sprintf("paused, %d after the rollback, vs AS OF taken before", i), asOf, got) {
			break
		}
		srv.WaitEpochs(t, 5)
	}
	if got := savepointNames(t, conn); !slices.Equal([]string{"sp"}, got) {
		t.Errorf("SHOW SAVEPOINTS after the rollback: %q", got)
	}

	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	// The name of the view that is gone is free again. (Not while paused:
	// see TestCreateViewWhilePaused.)
	testutil.MustExec(t, conn, "CREATE MATERIALIZED VIEW low_sum AS "+queries["low_sum"])
	all := append(append(append([]row(nil), b1...), b2...), b3...)
	names := append(atSP, "low_sum")
	want := ref.answer("ev", all, subset(queries, names...))
	compareViews(t, "after RESUME and FLUSH vs PostgreSQL over all input", want, viewRows(t, conn, names, ""))

	// The savepoint itself is unchanged by the rollback.
	compareViews(t, "AS OF SAVEPOINT sp after the rollback", asOf, viewRows(t, conn, atSP, " AS OF SAVEPOINT sp"))

	// Rolling back twice to the same savepoint works the same way.
	testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE", "ROLLBACK TO SAVEPOINT sp")
	compareViews(t, "second rollback, paused", asOf, viewRows(t, conn, atSP, ""))
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	delete(want, "low_sum") // created after the savepoint: gone again
	compareViews(t, "second rollback, after RESUME and FLUSH", want, viewRows(t, conn, atSP, ""))
	if got := viewNames(t, conn); !slices.Equal(sortedCopy(atSP), got) {
		t.Errorf("views after the second rollback: %q", got)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
