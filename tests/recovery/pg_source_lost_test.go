package recovery

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPGSourceSlotAndPublicationLost: a source whose replication slot is
// dropped on the source database copies its tables again from a new
// slot and ends equal to the source; one whose publication is dropped
// stops with a status that names the publication, while its mirrored
// table keeps its rows and stays readable, and DROP SOURCE still drops
// its slot.
func TestPGSourceSlotAndPublicationLost(t *testing.T) {
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE lost_t (id int PRIMARY KEY, v text NOT NULL)",
		"INSERT INTO lost_t SELECT g, 'v' || g FROM generate_series(1, 100) g",
		"CREATE PUBLICATION lost_pub FOR TABLE lost_t")
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, fmt.Sprintf("CREATE SOURCE lost FROM POSTGRES (CONNECTION '%s', PUBLICATION 'lost_pub') FOR ALL TABLES", pg.DSN()))
	q := "SELECT id, v FROM lost_t ORDER BY id"
	same := func(when string) {
		t.Helper()
		waitSourceCaughtUp(t, src, conn, when)
		cols, want := mustQuery(t, src, q)
		_, got := mustQuery(t, conn, q)
		if d := diffRows(cols, want, got, nil); d != "" {
			t.Fatalf("%s: the mirror differs from the source (%d rows, source %d): %s", when, len(got), len(want), d)
		}
	}
	testutil.MustExec(t, src, "UPDATE lost_t SET v = 'u' || id WHERE id % 3 = 0")
	same("the source to apply the first update")

	// The slot is dropped on the source (the applier reconnects to it
	// within seconds, so the drop is tried until it finds it idle).
	testutil.Poll(t, 2*time.Minute, "the slot to be dropped on the source", func() error {
		_, err := src.Exec(t.Context(), "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE active_pid IS NOT NULL")
		if err == nil {
			_, err = src.Exec(t.Context(), "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots")
		}
		return err
	})
	testutil.MustExec(t, src, "DELETE FROM lost_t WHERE id % 5 = 0", "INSERT INTO lost_t VALUES (1000, 'after the slot went')")
	testutil.Poll(t, 5*time.Minute, "a new slot", func() error {
		if n := testutil.Scalar(t, src, "SELECT count(*) FROM pg_replication_slots"); n != "1" {
			return fmt.Errorf("%s slots", n)
		}
		return nil
	})
	same("the source to copy its table again from a new slot")

	// The publication is dropped: the next change stops the source with
	// an error that names it; the mirror keeps what it held.
	testutil.MustExec(t, src, "DROP PUBLICATION lost_pub", "UPDATE lost_t SET v = 'lost' WHERE id = 1")
	testutil.Poll(t, 5*time.Minute, "the source to report the dropped publication", func() error {
		status := testutil.Scalar(t, conn, "SELECT status FROM streamdb_sources")
		if !strings.Contains(status, `publication "lost_pub" does not exist`) {
			return fmt.Errorf("status %q", status)
		}
		return nil
	})
	wantRow(t, conn, "SELECT count(*), min(v) FILTER (WHERE id = 1), max(id) FROM lost_t", "81 v1 1000")

	testutil.MustExec(t, conn, "DROP SOURCE lost CASCADE")
	testutil.Poll(t, time.Minute, "DROP SOURCE to drop the slot", func() error {
		if n := testutil.Scalar(t, src, "SELECT count(*) FROM pg_replication_slots"); n != "0" {
			return fmt.Errorf("%s slots left", n)
		}
		return nil
	})
}
