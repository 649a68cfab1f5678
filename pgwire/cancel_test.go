package pgwire_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
)

func TestCancelRequest(t *testing.T) {
	ts := startServer(t)
	for _, m := range queryModes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			done := make(chan error, 1)
			go func() {
				_, err := conn.Exec(context.Background(), "sleep")
				done <- err
			}()
			ts.waitStarted(t)
			if err := conn.PgConn().CancelRequest(testContext(t)); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "57014" || pe.Message != "canceling statement due to user request" {
					t.Fatalf("got %v, want 57014", err)
				}
			case <-time.After(testTimeout):
				t.Fatal("query was not cancelled")
			}
			// The connection survives its cancelled query.
			var n int32
			if err := conn.QueryRow(testContext(t), "select 9").Scan(&n); err != nil || n != 9 {
				t.Fatalf("after cancel: %d, %v", n, err)
			}
		})
	}
}

// TestContextCancel cancels through pgx's context handling, configured to
// send a CancelRequest rather than to break the connection.
func TestContextCancel(t *testing.T) {
	ts := startServer(t)
	cfg, err := pgx.ParseConfig(ts.connString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: time.Hour}
	}
	conn := ts.connectConfig(t, cfg)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "sleep")
		done <- err
	}()
	ts.waitStarted(t)
	cancel()
	select {
	case err := <-done:
		if pgCode(err) != "57014" && !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("query was not cancelled")
	}
	var n int32
	if err := conn.QueryRow(testContext(t), "select 9").Scan(&n); err != nil || n != 9 {
		t.Fatalf("after cancel: %d, %v", n, err)
	}
}

// TestCancelRaw cancels an extended-protocol Execute and checks that the
// rest of the batch is skipped up to Sync.
func TestCancelRaw(t *testing.T) {
	ts := startServer(t)
	rc, key := ts.rawConnect(t)
	// A cancel with a wrong secret, or for an idle connection, is ignored.
	ts.sendCancel(t, &pgproto3.BackendKeyData{ProcessID: key.ProcessID, SecretKey: []byte("nope")})
	ts.sendCancel(t, key)

	rc.send(&pgproto3.Parse{Query: "sleep"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "select 1"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Sync{}, &pgproto3.Query{String: "select 4"})
	ts.waitStarted(t)
	ts.sendCancel(t, key)
	// Nothing is flushed before Sync (or the error), as in PostgreSQL.
	expect[*pgproto3.ParseComplete](rc)
	expect[*pgproto3.BindComplete](rc)
	expectError(rc, "ERROR", "57014")
	expect[*pgproto3.ReadyForQuery](rc)
	expect[*pgproto3.RowDescription](rc)
	if row := expect[*pgproto3.DataRow](rc); string(row.Values[0]) != "4" {
		t.Errorf("row %q", row.Values)
	}
}
