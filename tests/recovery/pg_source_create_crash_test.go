package recovery

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestPGSourceCreateCrash kills streamdb (kill -9) while CREATE SOURCE
// copies a large table, then checks that after the restart it is as if
// the CREATE SOURCE never ran (as a crash in the middle of DDL in
// PostgreSQL): its mirrored tables are gone, and the same CREATE SOURCE
// runs again and mirrors the table exactly.
func TestPGSourceCreateCrash(t *testing.T) {
	src, srv, conn, create, done := sourceCopyRunning(t, "kill the server")
	srv.Kill(t)
	<-done
	srv.Restart(t)
	conn = srv.Conn(t)

	if _, _, err := queryText(conn, time.Minute, "SELECT count(*) FROM big"); err == nil || !strings.Contains(err.Error(), "42P01") {
		t.Errorf("after a crash during CREATE SOURCE, its table big: got %v, want it gone (42P01)", err)
	}
	if _, _, err := queryText(conn, time.Minute, "SELECT count(*) FROM s_progress"); err == nil || !strings.Contains(err.Error(), "42P01") {
		t.Errorf("after a crash during CREATE SOURCE, its table s_progress: got %v, want it gone (42P01)", err)
	}
	testutil.MustExec(t, conn, create)
	q := "SELECT count(*), sum(k), sum(v), sum(length(pad)) FROM big"
	cols, want := mustQuery(t, src, q)
	testutil.Poll(t, 5*time.Minute, "the mirror to equal the source", func() error {
		_, got, err := queryText(conn, time.Minute, q)
		if err != nil {
			return err
		}
		if d := diffRows(cols, want, got, nil); d != "" {
			return fmt.Errorf("%s", d)
		}
		return nil
	})
	testutil.MustExec(t, conn, "DROP SOURCE s")
}

// sourceCopyRunning starts a PostgreSQL source holding a large table and
// a streamdb server, sends that source's CREATE SOURCE from a session of
// its own, and returns once the copy has written part of the table
// (before the source is stored, which comes last). done receives the
// CREATE SOURCE's result. what says what the caller does during the
// copy, for the failure message when the copy ends first.
func sourceCopyRunning(t *testing.T, what string) (src *pgx.Conn, srv *testutil.Server, conn *pgx.Conn, create string, done chan error) {
	t.Helper()
	const rows = 400_000
	pg := testutil.StartPostgresLogical(t)
	src = pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE big (k bigint PRIMARY KEY, v int NOT NULL, pad text)",
		fmt.Sprintf("INSERT INTO big SELECT g, g %% 1000, repeat(md5(g::text), 4) FROM generate_series(1, %d) g", rows),
		"CREATE PUBLICATION pub FOR TABLE big")
	create = fmt.Sprintf("CREATE SOURCE s FROM POSTGRES (CONNECTION '%s', PUBLICATION 'pub') FOR ALL TABLES", pg.DSN())

	srv = startServer(t, testutil.ServerOptions{})
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "SELECT 1")
	done = make(chan error, 1)
	go func() {
		c, err := pgx.Connect(context.Background(), srv.DSN())
		if err != nil {
			done <- err
			return
		}
		defer c.Close(context.Background())
		done <- testutil.ExecSimple(c, 10*time.Minute, create)
	}()
	testutil.Poll(t, 5*time.Minute, "the copy to start", func() error {
		select {
		case err := <-done:
			t.Fatalf("CREATE SOURCE finished (%v) before the test could %s during its copy", err, what)
		default:
		}
		_, r, err := queryText(conn, 30*time.Second, "SELECT count(*) FROM big")
		if err != nil {
			return err
		}
		if r[0][0] == "0" {
			return fmt.Errorf("no rows copied yet")
		}
		return nil
	})
	return src, srv, conn, create, done
}
