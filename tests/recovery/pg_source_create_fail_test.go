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

// TestPGSourceCreateFailsWhole: a CREATE SOURCE that fails after making
// its tables (here: another session takes the source's name while the
// copy runs, so the source cannot be stored) leaves nothing behind on
// either side, without a restart: its mirrored tables and progress
// table are dropped, and so is its replication slot.
func TestPGSourceCreateFailsWhole(t *testing.T) {
	const rows = 400_000
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE big (k bigint PRIMARY KEY, v int NOT NULL, pad text)",
		fmt.Sprintf("INSERT INTO big SELECT g, g %% 1000, repeat(md5(g::text), 4) FROM generate_series(1, %d) g", rows),
		"CREATE PUBLICATION pub FOR TABLE big")
	create := fmt.Sprintf("CREATE SOURCE s FROM POSTGRES (CONNECTION '%s', PUBLICATION 'pub') FOR ALL TABLES", pg.DSN())

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "SELECT 1")
	done := make(chan error, 1)
	go func() {
		c, err := pgx.Connect(context.Background(), srv.DSN())
		if err != nil {
			done <- err
			return
		}
		defer c.Close(context.Background())
		done <- testutil.ExecSimple(c, 10*time.Minute, create)
	}()
	// Take the source's name once the copy has written part of the
	// table: the source is stored last, after the copy.
	testutil.Poll(t, 5*time.Minute, "the copy to start", func() error {
		select {
		case err := <-done:
			t.Fatalf("CREATE SOURCE finished (%v) before the test could take its name during the copy", err)
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
	testutil.MustExec(t, conn, "CREATE TABLE s (k int)")
	err := <-done
	if err == nil || testutil.SQLState(err) != "42P07" {
		t.Fatalf("CREATE SOURCE whose name was taken during its copy: %v (SQLSTATE %s), want 42P07", err, testutil.SQLState(err))
	}

	for _, table := range []string{"big", "s_progress"} {
		if _, _, err := queryText(conn, time.Minute, "SELECT count(*) FROM "+table); err == nil || !strings.Contains(err.Error(), "42P01") {
			t.Errorf("after CREATE SOURCE failed, its table %s: got %v, want it dropped (42P01)", table, err)
		}
	}
	_, slots := mustQuery(t, src, "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'streamdb_s_%'")
	if slots[0][0] != "0" {
		t.Errorf("after CREATE SOURCE failed, %s of its replication slots remain on the source, want none", slots[0][0])
	}
	// The name is free again once the table that took it goes.
	testutil.MustExec(t, conn, "DROP TABLE s", create)
	testutil.MustExec(t, conn, "DROP SOURCE s")
}
