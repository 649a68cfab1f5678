package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestAdvisoryXactLock: pg_advisory_xact_lock (Kysely's Migrator takes
// one around its migrations) holds its key until the transaction block
// ends, and a second session asking for the key waits for it.
func TestAdvisoryXactLock(t *testing.T) {
	srv := startServer(t)
	a := srv.Conn(t)
	b := srv.Conn(t)
	exec(t, a, "BEGIN", "SELECT pg_advisory_xact_lock(3853314791062309107)")
	// Another key is free.
	exec(t, b, "SELECT pg_advisory_xact_lock(1)")

	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := b.Exec(ctx, "SELECT pg_advisory_xact_lock(3853314791062309107)", pgx.QueryExecModeSimpleProtocol)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a second session took the key while the first holds it (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	exec(t, a, "COMMIT")
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiting for the key: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the key was not free 30s after the holder's COMMIT")
	}
	// A held key is released by ROLLBACK too, and by the session's end.
	exec(t, a, "BEGIN", "SELECT pg_advisory_xact_lock(5)", "ROLLBACK")
	exec(t, b, "SELECT pg_advisory_xact_lock(5)")
	c := srv.Conn(t)
	exec(t, c, "BEGIN", "SELECT pg_advisory_xact_lock(6)")
	c.Close(testutil.Context(t, 10*time.Second))
	// The wait ends once the server has closed c's session.
	exec(t, b, "SELECT pg_advisory_xact_lock(6)")
}
