package recovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestSequenceNoRepeatAfterKill kills streamdb (and the embedded NATS in
// it) with SIGKILL between nextval calls, several times: after each
// restart every value nextval hands out is new, larger than any handed
// out before the crash (values lost in a crash are fine, as in
// PostgreSQL), and a serial column goes on inserting without a duplicate
// key.
func TestSequenceNoRepeatAfterKill(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x5e9))
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE SEQUENCE crash_seq",
		"CREATE SEQUENCE crash_seq_cached CACHE 100 INCREMENT BY 3",
		"CREATE TABLE crash_serial (id bigserial PRIMARY KEY, round int)")
	seen := map[string]map[int64]bool{"crash_seq": {}, "crash_seq_cached": {}}
	maxBefore := map[string]int64{}
	const rounds = 4
	for round := 0; round < rounds; round++ {
		for name, vals := range seen {
			n := 1 + rng.IntN(80)
			for i := 0; i < n; i++ {
				v := nextval(t, conn, name)
				if vals[v] {
					t.Fatalf("seed %d, round %d: %s handed out %d twice", seed, round, name, v)
				}
				if v <= maxBefore[name] {
					t.Fatalf("seed %d, round %d: %s handed out %d, not above %d handed out before the crash", seed, round, name, v, maxBefore[name])
				}
				vals[v] = true
			}
		}
		rows := 1 + rng.IntN(20)
		for i := 0; i < rows; i++ {
			// A repeated id would be a duplicate key (23505).
			testutil.MustExec(t, conn, fmt.Sprintf("INSERT INTO crash_serial (round) VALUES (%d)", round))
		}
		for name, vals := range seen {
			for v := range vals {
				maxBefore[name] = max(maxBefore[name], v)
			}
		}
		srv.Kill(t)
		srv.Restart(t)
		conn = srv.Conn(t)
	}
	_, got := mustQuery(t, conn, "SELECT count(*), count(DISTINCT id) FROM crash_serial")
	if got[0][0] != got[0][1] {
		t.Fatalf("seed %d: crash_serial has %s rows but %s ids", seed, got[0][0], got[0][1])
	}
}

// TestSequenceAcrossRollbackTo: ROLLBACK TO SAVEPOINT brings the catalog
// back, a sequence dropped after the savepoint included, but a sequence
// never goes back: values handed out after the savepoint are not handed
// out again, as PostgreSQL never reuses a value.
func TestSequenceAcrossRollbackTo(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "CREATE SEQUENCE sp_seq", "CREATE SEQUENCE sp_dropped")
	if v := nextval(t, conn, "sp_seq"); v != 1 {
		t.Fatalf("first nextval = %d, want 1", v)
	}
	nextval(t, conn, "sp_dropped")
	testutil.MustExec(t, conn, "SAVEPOINT before_more")
	for i := 0; i < 40; i++ {
		nextval(t, conn, "sp_seq")
	}
	last := nextval(t, conn, "sp_dropped")
	testutil.MustExec(t, conn, "DROP SEQUENCE sp_dropped", "CREATE SEQUENCE sp_new")
	testutil.MustExec(t, conn, "ROLLBACK TO SAVEPOINT before_more")
	conn = srv.Conn(t)
	if v := nextval(t, conn, "sp_seq"); v != 42 {
		t.Fatalf("nextval after ROLLBACK TO = %d, want 42 (values 2..41 were handed out after the savepoint)", v)
	}
	if v := nextval(t, conn, "sp_dropped"); v <= last {
		t.Fatalf("a sequence restored by ROLLBACK TO answered %d, not above %d handed out before", v, last)
	}
	if _, _, err := queryText(conn, testutil.ExecTimeout, "SELECT nextval('sp_new')"); err == nil {
		t.Fatalf("sp_new, created after the savepoint, is still there after ROLLBACK TO")
	}
}

func nextval(t testing.TB, conn *pgx.Conn, seq string) int64 {
	t.Helper()
	var v int64
	if err := conn.QueryRow(context.Background(), "SELECT nextval($1)", seq).Scan(&v); err != nil {
		t.Fatalf("nextval('%s'): %v", seq, err)
	}
	return v
}

// TestSequenceCleanRestartNoGap: after a clean shutdown a sequence goes on
// from where it was, with no gap for the values it had reserved ahead,
// also after a bulk insert into a serial column (which reserves larger
// blocks); a kill -9 may leave a gap, never a repeat.
func TestSequenceCleanRestartNoGap(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "CREATE SEQUENCE clean_seq", "CREATE TABLE clean_serial (id bigserial PRIMARY KEY, v int)",
		"INSERT INTO clean_serial (v) SELECT g FROM generate_series(1, 5000) AS g")
	for want := int64(1); want <= 3; want++ {
		if v := nextval(t, conn, "clean_seq"); v != want {
			t.Fatalf("nextval = %d, want %d", v, want)
		}
	}
	srv.Restart(t)
	conn = srv.Conn(t)
	if v := nextval(t, conn, "clean_seq"); v != 4 {
		t.Fatalf("nextval after a clean restart = %d, want 4", v)
	}
	testutil.MustExec(t, conn, "INSERT INTO clean_serial (v) VALUES (0)")
	_, rows := mustQuery(t, conn, "SELECT max(id), count(*) FROM clean_serial")
	if rows[0][0] != "5001" || rows[0][1] != "5001" {
		t.Fatalf("clean_serial after a clean restart: max(id), count(*) = %v, want 5001 5001", rows[0])
	}
}
