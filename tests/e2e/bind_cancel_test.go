package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestBindCancellation: a statement that takes seconds to bind (a UNION
// ALL chain of 40,000 arms) stops at statement_timeout and at
// pg_cancel_backend with 57014, and pg_terminate_backend ends its session,
// as PostgreSQL's do, and so does the client's CancelRequest; the binder
// looks at the statement's context as it goes. The cancelled session stays
// usable.
func TestBindCancellation(t *testing.T) {
	srv := startServer(t)
	ctx := testutil.Context(t, 5*time.Minute)
	conn := srv.Conn(t)
	admin := srv.Conn(t)
	arms := make([]string, 40_000)
	for i := range arms {
		arms[i] = fmt.Sprintf("SELECT %d AS n", i)
	}
	wide := strings.Join(arms, " UNION ALL ")

	exec(t, conn, "SET statement_timeout = '100ms'")
	if pe := wantExecCode(t, conn, wide, "57014"); pe != nil && pe.Message != "canceling statement due to statement timeout" {
		t.Errorf("message %q", pe.Message)
	}
	wantRows(t, conn, "SELECT 1", "1")
	exec(t, conn, "SET statement_timeout = 0")

	// binding waits for the session pid to be seen running the statement.
	binding := func(pid uint32) {
		t.Helper()
		poll(t, time.Minute, func() error {
			got := textRows(t, admin, fmt.Sprintf("SELECT state, left(query, 23) FROM pg_stat_activity WHERE pid = %d", pid))
			if len(got) != 1 || got[0] != "active SELECT 0 AS n UNION ALL" {
				return fmt.Errorf("activity of %d: %q", pid, got)
			}
			return nil
		})
	}

	pid := conn.PgConn().PID()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, wide)
		done <- err
	}()
	binding(pid)
	wantRows(t, admin, fmt.Sprintf("SELECT pg_cancel_backend(%d)", pid), "t")
	select {
	case err := <-done:
		if pe := wantCode(t, err, "57014"); pe != nil && pe.Message != "canceling statement due to user request" {
			t.Errorf("message %q", pe.Message)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled statement did not end")
	}
	wantRows(t, conn, "SELECT 1", "1")

	// The client's own CancelRequest.
	go func() {
		_, err := conn.Exec(ctx, wide)
		done <- err
	}()
	binding(pid)
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantCode(t, err, "57014")
	case <-ctx.Done():
		t.Fatal("the cancelled statement did not end")
	}
	wantRows(t, conn, "SELECT 1", "1")

	victim := srv.Conn(t)
	pid = victim.PgConn().PID()
	go func() {
		_, err := victim.Exec(ctx, wide)
		done <- err
	}()
	binding(pid)
	wantRows(t, admin, fmt.Sprintf("SELECT pg_terminate_backend(%d)", pid), "t")
	poll(t, 30*time.Second, func() error {
		if got := textRows(t, admin, fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid)); got[0] != "0" {
			return fmt.Errorf("the terminated session is still listed")
		}
		return nil
	})
	if err := <-done; err == nil {
		t.Error("the terminated session's statement succeeded")
	}
	wantRows(t, admin, "SELECT 1", "1")
}
