package savepoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestTransactionSavepointsViaDriver: pgx nested transactions send
// SAVEPOINT / RELEASE SAVEPOINT / ROLLBACK TO SAVEPOINT inside BEGIN ...
// COMMIT over the extended protocol. They are transaction savepoints: they
// undo or keep the block's writes, are never durable, and do not touch a
// durable savepoint of the same name.
func TestTransactionSavepointsViaDriver(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.tx"), "CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"])
	testutil.MustExec(t, conn, "INSERT INTO ev VALUES (1, 'a', 5)", "FLUSH", "SAVEPOINT sp_1") // durable; pgx names its first nested one sp_1
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nested, err := tx.Begin(ctx) // SAVEPOINT sp_1
	if err != nil {
		t.Fatalf("nested Begin (SAVEPOINT inside a transaction): %v", err)
	}
	if _, err := nested.Exec(ctx, "INSERT INTO ev VALUES (2, 'b', 7)"); err != nil {
		t.Fatal(err)
	}
	if err := nested.Rollback(ctx); err != nil { // ROLLBACK TO SAVEPOINT sp_1
		t.Fatalf("nested Rollback (ROLLBACK TO SAVEPOINT inside a transaction): %v", err)
	}
	nested, err = tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nested.Exec(ctx, "INSERT INTO ev VALUES (3, 'c', 9)"); err != nil {
		t.Fatal(err)
	}
	if err := nested.Commit(ctx); err != nil { // RELEASE SAVEPOINT sp_1
		t.Fatalf("nested Commit (RELEASE SAVEPOINT inside a transaction): %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Nothing durable was made or released, and no state was rolled back:
	// the rolled-back INSERT is gone, the released one committed.
	if got := savepointNames(t, conn); !slices.Equal([]string{"sp_1"}, got) {
		t.Errorf("SHOW SAVEPOINTS after transaction savepoints: %q", got)
	}
	if got := mustRows(t, conn, "SELECT n FROM totals"); !slices.Equal([]string{"2"}, got) {
		t.Errorf("totals after the transaction: %q", got)
	}
	if got := mustRows(t, conn, "SELECT n FROM totals AS OF SAVEPOINT sp_1"); !slices.Equal([]string{"1"}, got) {
		t.Errorf("durable sp_1 after the transaction: %q", got)
	}
	// An unknown transaction savepoint is an error that aborts the block,
	// whose COMMIT then rolls back, as in PostgreSQL.
	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "RELEASE SAVEPOINT never_made"); pgCode(err) != "3B001" {
		t.Errorf("RELEASE of an unknown transaction savepoint: want 3B001, got %v", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("COMMIT of an aborted block: want %v, got %v", pgx.ErrTxCommitRollback, err)
	}
	// Outside the block the same statements are durable again.
	wantCode(t, testutil.ExecSimple(conn, time.Minute, "SAVEPOINT sp_1"), "42710", "durable SAVEPOINT sp_1 after COMMIT")
}

// TestCreateViewWhilePaused: a rollback between PAUSE and RESUME is how an
// operator changes views or moves sources before the replay. Moving a
// source and dropping a view work while paused; CREATE MATERIALIZED VIEW
// must return too (it may backfill later), not block until some other
// session resumes the sources.
func TestCreateViewWhilePaused(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	q := viewQueries()
	testutil.MustExec(t, conn, streamDDL("ev", "ev.pausedddl"),
		"CREATE MATERIALIZED VIEW totals AS "+q["totals"],
		"CREATE MATERIALIZED VIEW per_g AS "+q["per_g"],
		"INSERT INTO ev VALUES (1, 'a', 5), (2, 'b', 7)", "FLUSH", "SAVEPOINT sp",
		"INSERT INTO ev VALUES (3, 'a', 9)", "FLUSH",
		"ALTER SYSTEM PAUSE", "ROLLBACK TO SAVEPOINT sp",
		"ALTER STREAM ev SET POSITION = 'earliest'",
		"DROP MATERIALIZED VIEW per_g")

	ddl := srv.Conn(t)
	res := make(chan error, 1)
	go func() { res <- testutil.ExecSimple(ddl, time.Minute, "CREATE MATERIALIZED VIEW g_max AS "+q["g_max"]) }()
	select {
	case err := <-res:
		if err != nil {
			t.Errorf("CREATE MATERIALIZED VIEW while paused: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("CREATE MATERIALIZED VIEW while paused did not return within 5s (it waits for a backfill that cannot start until RESUME)")
		testutil.MustExec(t, conn, "ALTER SYSTEM RESUME")
		if err := <-res; err != nil {
			t.Errorf("CREATE MATERIALIZED VIEW after RESUME: %v", err)
		}
	}
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	// totals: the savepoint's 2 rows (sum 12), then all 3 again from the
	// earliest (sum 21).
	if got := mustRows(t, conn, "SELECT n, s FROM totals"); !slices.Equal([]string{"5|33"}, got) {
		t.Errorf("totals after PAUSE, rollback, SET POSITION earliest, RESUME: %q, want 5|33", got)
	}
	if got := mustRows(t, conn, "SELECT * FROM g_max"); !slices.Equal([]string{"a|9|2", "b|7|1"}, got) {
		t.Errorf("g_max: %q", got)
	}
}

// TestTimestampOfShownPoint: SHOW SAVEPOINTS shows created_at, the time the
// savepoint completed. AS OF TIMESTAMP and ROLLBACK TO TIMESTAMP with that
// very value pick "the newest point completed at or before" it, which must
// be that savepoint, not the one before.
func TestTimestampOfShownPoint(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_EXECUTION_CHECKPOINTING_INTERVAL=0"}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.ts"), "CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"],
		"INSERT INTO ev VALUES (1, 'a', 5)", "FLUSH", "SAVEPOINT first",
		"INSERT INTO ev VALUES (2, 'a', 7)", "FLUSH", "SAVEPOINT second",
		"INSERT INTO ev VALUES (3, 'a', 9)", "FLUSH")
	var shown string
	for _, r := range mustQuery(t, conn, "SHOW SAVEPOINTS") {
		if r[0] == "second" {
			shown = r[3]
		}
	}
	want := mustRows(t, conn, "SELECT n FROM totals AS OF SAVEPOINT second")
	if !slices.Equal([]string{"2"}, want) {
		t.Fatalf("AS OF SAVEPOINT second: %q", want)
	}
	got, err := rowsErr(conn, fmt.Sprintf("SELECT n FROM totals AS OF TIMESTAMP '%s'", shown))
	if err != nil || !slices.Equal(want, got) {
		t.Errorf("AS OF TIMESTAMP '%s' (created_at of savepoint second as SHOW SAVEPOINTS shows it): got %q, %v; want %q (the state of second)", shown, got, err, want)
	}
	testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE")
	if err := testutil.ExecSimple(conn, time.Minute, fmt.Sprintf("ROLLBACK TO TIMESTAMP '%s'", shown)); err != nil {
		t.Errorf("ROLLBACK TO TIMESTAMP '%s': %v", shown, err)
	} else if got := mustRows(t, conn, "SELECT n FROM totals"); !slices.Equal(want, got) {
		t.Errorf("ROLLBACK TO TIMESTAMP '%s' (created_at of second): totals n = %q, want %q", shown, got, want)
	}
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	if got := mustRows(t, conn, "SELECT n FROM totals"); !slices.Equal([]string{"3"}, got) {
		t.Errorf("after RESUME and FLUSH: %q", got)
	}
}

// TestSavepointRightAfterRestart: a savepoint taken right after a restart,
// before the first barrier of the new run, must still record the views'
// source positions (SHOW SAVEPOINTS positions; the 55000 check of ROLLBACK
// relies on them). With a 3s barrier interval that window is wide.
func TestSavepointRightAfterRestart(t *testing.T) {
	natsURL := testutil.StartNATS(t)
	_, js := testutil.JetStream(t, natsURL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const subject = "ev.restart"
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "restart_js", Subjects: []string{subject}, MaxMsgs: 8, Discard: jetstream.DiscardOld, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL, Env: []string{"STREAMDB_EXECUTION_BARRIER_INTERVAL=3s"}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, streamDDL("ev", subject), "CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"],
		"INSERT INTO ev VALUES (1, 'a', 1), (2, 'a', 2), (3, 'a', 3), (4, 'a', 4), (5, 'a', 5)", "FLUSH")
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "SAVEPOINT sp")
	var pos string
	cols, rows, err := queryText(conn, time.Minute, "SHOW SAVEPOINTS")
	if err != nil {
		t.Fatal(err)
	}
	at := slices.Index(cols, "positions")
	if at < 0 {
		t.Fatalf("SHOW SAVEPOINTS has no positions column: %v", cols)
	}
	for _, r := range rows {
		pos = r[at]
	}
	if pos != "totals/ev=5" {
		t.Errorf("SHOW SAVEPOINTS positions of a savepoint taken right after a restart: %q, want %q", pos, "totals/ev=5")
	}
	// Consequence: JetStream discards messages 1..9; rolling back to sp
	// needs message 6 on, so it must fail with 55000 and change nothing.
	testutil.MustExec(t, conn, "SET execution.barrier.interval = '20ms'")
	for i := 6; i <= 17; i++ {
		testutil.MustExec(t, conn, fmt.Sprintf("INSERT INTO ev VALUES (%d, 'a', %d)", i, i), "FLUSH")
	}
	before := mustRows(t, conn, "SELECT * FROM totals")
	err = testutil.ExecSimple(conn, time.Minute, "ROLLBACK TO SAVEPOINT sp")
	wantCode(t, err, "55000", "ROLLBACK TO SAVEPOINT sp (recorded right after a restart; its input is gone)")
	if got, err := rowsErr(conn, "SELECT * FROM totals"); err != nil || !slices.Equal(before, got) {
		t.Errorf("totals after the rollback that should have failed: %q, %v; want %q", got, err, before)
	}
	for _, r := range mustQuery(t, conn, "SHOW MATERIALIZED VIEWS") {
		if st := r[2]; st != "running" { // name, definition, status, node
			t.Errorf("view %s status %q after the rollback", r[0], st)
		}
	}
	if !strings.Contains(pos, "=5") {
		t.Logf("(the savepoint recorded positions %q instead of the committed ones)", pos)
	}
}
