package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestStatActivity: pg_stat_activity has one row per session with the pid
// of its BackendKeyData (pg_backend_pid()), its user, application_name,
// client address, state and statement; pg_cancel_backend stops another
// session's statement and pg_terminate_backend ends the session.
func TestStatActivity(t *testing.T) {
	srv := startServer(t)
	ctx := testutil.Context(t, 2*time.Minute)
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = "victim app"
	victim, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Close(context.Background()) })
	admin := srv.Conn(t)
	pid := victim.PgConn().PID()
	wantRows(t, victim, "SELECT pg_backend_pid()", fmt.Sprint(pid))
	wantRows(t, admin, "SELECT pg_backend_pid() = "+fmt.Sprint(admin.PgConn().PID()), "t")

	// state, query and the connection's facts, for the other session and
	// for the one asking.
	exec(t, victim, "BEGIN", "SELECT 42")
	wantRows(t, admin, fmt.Sprintf(`SELECT usename, application_name, client_addr, client_port > 0, state, query,
		backend_start <= now(), state_change >= backend_start, backend_type
		FROM pg_stat_activity WHERE pid = %d`, pid),
		"streamdb victim app 127.0.0.1 t idle in transaction SELECT 42 t t client backend")
	exec(t, victim, "COMMIT")
	wantRows(t, admin, fmt.Sprintf("SELECT state, query FROM pg_stat_activity WHERE pid = %d", pid), "idle COMMIT")
	wantRows(t, admin, "SELECT state, query FROM pg_stat_activity WHERE pid = pg_backend_pid()",
		"active SELECT state, query FROM pg_stat_activity WHERE pid = pg_backend_pid()")
	// Only the two sessions, once the server has seen the end of the
	// connections that came before them (testutil's readiness probe closes
	// without waiting for the server to drop it, as a PostgreSQL client
	// does; PostgreSQL too lists such a backend until it has exited).
	poll(t, 30*time.Second, func() error {
		got := textRows(t, admin, "SELECT pid, application_name, state, query FROM pg_stat_activity ORDER BY pid")
		if len(got) != 2 {
			return fmt.Errorf("want the 2 sessions, pg_stat_activity lists %d: %q", len(got), got)
		}
		return nil
	})

	// Cancel a statement that would run for a very long time.
	exec(t, admin, "CREATE TABLE big (id BIGINT PRIMARY KEY)")
	var vals []string
	for i := 0; i < 1000; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	exec(t, admin, "INSERT INTO big VALUES "+strings.Join(vals, ","))
	const slow = "SELECT count(*) FROM big a, big b, big c WHERE a.id + b.id + c.id < 0"
	done := make(chan error, 1)
	go func() {
		_, err := victim.Exec(ctx, slow)
		done <- err
	}()
	poll(t, 30*time.Second, func() error {
		got := textRows(t, admin, fmt.Sprintf("SELECT state, query FROM pg_stat_activity WHERE pid = %d", pid))
		if len(got) != 1 || got[0] != "active "+slow {
			return fmt.Errorf("victim's activity: %q", got)
		}
		return nil
	})
	wantRows(t, admin, fmt.Sprintf("SELECT pg_cancel_backend(%d)", pid), "t")
	select {
	case err := <-done:
		wantCode(t, err, "57014")
	case <-ctx.Done():
		t.Fatal("the cancelled statement did not end")
	}
	wantRows(t, victim, "SELECT 1", "1")
	wantRows(t, admin, "SELECT pg_cancel_backend(1)", "f")

	// Terminate the session: its next statement finds the connection gone.
	var terminated bool
	if err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&terminated); err != nil || !terminated {
		t.Fatalf("pg_terminate_backend: %v, %v", terminated, err)
	}
	poll(t, 30*time.Second, func() error {
		if got := textRows(t, admin, fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid)); got[0] != "0" {
			return fmt.Errorf("terminated session still listed")
		}
		return nil
	})
	if _, err := victim.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("the terminated session still runs statements")
	}
}
