package e2e

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestQueryCursor: DECLARE ... CURSOR FOR SELECT needs a transaction block
// unless WITH HOLD (25P01); FETCH and MOVE walk the rows forward and say
// how many they took; a cursor without HOLD ends at COMMIT, a WITH HOLD
// one survives COMMIT but not ROLLBACK; CLOSE ALL ends them all.
func TestQueryCursor(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE t1 (k int PRIMARY KEY, v text)",
		"INSERT INTO t1 VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")

	wantExecCode(t, conn, "DECLARE c0 CURSOR FOR SELECT * FROM t1", "25P01")

	exec(t, conn, "BEGIN", "DECLARE c2 NO SCROLL CURSOR WITHOUT HOLD FOR SELECT k, v FROM t1 ORDER BY k")
	wantExecCode(t, conn, "DECLARE c2 CURSOR FOR SELECT 1", "42P03")
	exec(t, conn, "ROLLBACK", "BEGIN", "DECLARE c2 CURSOR FOR SELECT k, v FROM t1 ORDER BY k")
	wantRows(t, conn, "FETCH 2 FROM c2", "1 a", "2 b")
	tag, err := conn.Exec(testutil.Context(t, 30*time.Second), "MOVE 1 IN c2", pgx.QueryExecModeSimpleProtocol)
	if err != nil || tag.String() != "MOVE 1" {
		t.Fatalf("MOVE 1: tag %q, err %v", tag, err)
	}
	wantRows(t, conn, "FETCH NEXT c2", "4 d")
	wantRows(t, conn, "FETCH FORWARD ALL FROM c2", "5 e")
	wantRows(t, conn, "FETCH c2")
	tag, err = conn.Exec(testutil.Context(t, 30*time.Second), "MOVE ALL IN c2", pgx.QueryExecModeSimpleProtocol)
	if err != nil || tag.String() != "MOVE 0" {
		t.Fatalf("MOVE ALL at the end: tag %q, err %v", tag, err)
	}
	exec(t, conn, "CLOSE c2")
	wantExecCode(t, conn, "FETCH c2", "34000")
	exec(t, conn, "ROLLBACK")

	// Without HOLD the cursor ends with its block; WITH HOLD survives COMMIT.
	exec(t, conn, "BEGIN",
		"DECLARE plain CURSOR FOR SELECT k FROM t1 ORDER BY k",
		"DECLARE held CURSOR WITH HOLD FOR SELECT k FROM t1 ORDER BY k",
		"INSERT INTO t1 VALUES (6, 'f')", "COMMIT")
	wantExecCode(t, conn, "FETCH plain", "34000")
	wantRows(t, conn, "FETCH 10 held", "1", "2", "3", "4", "5")

	// A ROLLBACK drops the WITH HOLD cursors its block declared, not older ones.
	exec(t, conn, "DECLARE outside CURSOR WITH HOLD FOR SELECT count(*) FROM t1",
		"BEGIN", "DECLARE gone CURSOR WITH HOLD FOR SELECT 1", "ROLLBACK")
	wantExecCode(t, conn, "FETCH gone", "34000")
	wantRows(t, conn, "FETCH outside", "6")
	exec(t, conn, "CLOSE ALL")
	wantExecCode(t, conn, "FETCH held", "34000")

	// A bad query is refused at DECLARE and fails the block.
	exec(t, conn, "BEGIN")
	wantExecCode(t, conn, "DECLARE bad CURSOR FOR SELECT * FROM nosuch", "42P01")
	exec(t, conn, "ROLLBACK")
}

// TestQueryCursorMemory: the rows a session's cursors hold are bounded by
// query_max_memory; a DECLARE past it is refused with 53200 and the
// session keeps serving.
func TestQueryCursorMemory(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "SET query_max_memory = '64kB'", "BEGIN")
	wantExecCode(t, conn, "DECLARE big CURSOR FOR SELECT g, repeat('x', 100) FROM generate_series(1, 2000) AS g", "53200")
	exec(t, conn, "ROLLBACK", "BEGIN", "DECLARE small CURSOR FOR SELECT g FROM generate_series(1, 3) AS g")
	wantRows(t, conn, "FETCH ALL small", "1", "2", "3")
	exec(t, conn, "COMMIT")
}

// TestDiscardDeallocate: DEALLOCATE removes the connection's prepared
// statements (26000 for an unknown name), DISCARD ALL resets the session
// (settings, cursors, prepared statements) and refuses to run in a block.
func TestDiscardDeallocate(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, time.Minute)
	if _, err := conn.Prepare(ctx, "s1", "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	tag, err := conn.Exec(ctx, "DEALLOCATE s1", pgx.QueryExecModeSimpleProtocol)
	if err != nil || tag.String() != "DEALLOCATE" {
		t.Fatalf("DEALLOCATE s1: tag %q, err %v", tag, err)
	}
	wantExecCode(t, conn, "DEALLOCATE PREPARE s1", "26000")
	if _, err := conn.PgConn().ExecPrepared(ctx, "s1", nil, nil, nil).Close(); err == nil {
		t.Fatal("s1 still runs after DEALLOCATE")
	}
	if _, err := conn.Prepare(ctx, "s2", "SELECT 2"); err != nil {
		t.Fatal(err)
	}
	tag, err = conn.Exec(ctx, "DEALLOCATE ALL", pgx.QueryExecModeSimpleProtocol)
	if err != nil || tag.String() != "DEALLOCATE ALL" {
		t.Fatalf("DEALLOCATE ALL: tag %q, err %v", tag, err)
	}
	wantExecCode(t, conn, "DEALLOCATE s2", "26000")

	exec(t, conn, "SET application_name = 'pooled'", "DECLARE h CURSOR WITH HOLD FOR SELECT 1",
		"DISCARD PLANS", "DISCARD SEQUENCES", "DISCARD TEMP")
	wantRows(t, conn, "SHOW application_name", "pooled")
	exec(t, conn, "BEGIN")
	wantExecCode(t, conn, "DISCARD ALL", "25001")
	exec(t, conn, "ROLLBACK")
	tag, err = conn.Exec(ctx, "DISCARD ALL", pgx.QueryExecModeSimpleProtocol)
	if err != nil || tag.String() != "DISCARD ALL" {
		t.Fatalf("DISCARD ALL: tag %q, err %v", tag, err)
	}
	wantRows(t, conn, "SHOW application_name", "")
	wantExecCode(t, conn, "FETCH h", "34000")

	// The session's reset values are what its startup packet said: pgx
	// sends application_name there, and RESET, RESET ALL and DISCARD ALL
	// go back to it, as in PostgreSQL.
	app := testutil.ConnDSN(t, srv.DSN()+"&application_name=startup-app")
	wantRows(t, app, "SHOW application_name", "startup-app")
	for _, reset := range []string{"RESET application_name", "RESET ALL", "DISCARD ALL"} {
		exec(t, app, "SET application_name = 'changed'", "SET extra_float_digits = 3")
		wantRows(t, app, "SHOW application_name", "changed")
		exec(t, app, reset)
		wantRows(t, app, "SHOW application_name", "startup-app")
		if reset != "RESET application_name" {
			wantRows(t, app, "SHOW extra_float_digits", "1")
		}
	}
	wantRows(t, app, "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()", "startup-app")
}
