package pgwire_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/pgwire"
)

// startForwarder serves a Forwarder on a loopback port, sending sessions
// where target says; it returns the port's address.
func startForwarder(t *testing.T, target pgwire.ForwardTarget) (*pgwire.Forwarder, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := pgwire.NewForwarder(pgwire.Security{}, target, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.Serve(ln)
	t.Cleanup(func() { f.Close() })
	return f, ln.Addr().String()
}

func to(addr string) pgwire.ForwardTarget {
	return func() (string, *pgproto3.ErrorResponse) { return addr, nil }
}

func connectTo(t *testing.T, addr string) (*pgx.Conn, error) {
	t.Helper()
	return pgx.Connect(testContext(t), "postgres://tester@"+addr+"/db?sslmode=disable")
}

func TestForwarderRelaysSessions(t *testing.T) {
	ts := startServer(t)
	f, addr := startForwarder(t, to(ts.addr))
	conn, err := connectTo(t, addr)
	if err != nil {
		t.Fatalf("connect through the forwarder: %v", err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(testContext(t), "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("SELECT 1 through the forwarder: %d, %v", n, err)
	}
	if f.Sessions() != 1 {
		t.Fatalf("forwarder relays %d sessions, want 1", f.Sessions())
	}
	// The lease moved: the session ends with 57P01 between two messages.
	f.CutExcept("127.0.0.1:1")
	_, err = conn.Exec(testContext(t), "SELECT 1")
	if pgCode(err) != "57P01" || !strings.Contains(err.Error(), "no longer "+ts.addr) {
		t.Fatalf("a cut session: %v, want 57P01 naming the old coordinator", err)
	}
}

// Two members that each believe the other leads: the mark makes the
// second refuse instead of relaying the session back.
func TestForwarderRefusesForwardedSessions(t *testing.T) {
	var second string
	_, first := startForwarder(t, func() (string, *pgproto3.ErrorResponse) { return second, nil })
	_, second = startForwarder(t, to(first))
	for _, addr := range []string{first, second} {
		_, err := connectTo(t, addr)
		if pgCode(err) != "57P03" || !strings.Contains(err.Error(), "another member forwarded") {
			t.Fatalf("connect to a member in a loop at %s: %v, want 57P03", addr, err)
		}
	}
}

// A server skips the mark: what follows is served as from any client.
func TestServerSkipsForwardMark(t *testing.T) {
	ts := startServer(t)
	_, addr := startForwarder(t, to(ts.addr))
	rc := (&testServer{addr: addr}).dialRaw(t)
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "tester"}})
	expect[*pgproto3.AuthenticationOk](rc)
}

func TestForwarderRefusesWithoutCoordinator(t *testing.T) {
	refusal := &pgproto3.ErrorResponse{Severity: "FATAL", Code: "57P03", Message: "no coordinator yet"}
	_, addr := startForwarder(t, func() (string, *pgproto3.ErrorResponse) { return "", refusal })
	_, err := connectTo(t, addr)
	if pgCode(err) != "57P03" || !strings.Contains(err.Error(), "no coordinator yet") {
		t.Fatalf("connect with no coordinator: %v, want 57P03", err)
	}
}

func TestForwarderRefusesGarbage(t *testing.T) {
	ts := startServer(t)
	_, addr := startForwarder(t, to(ts.addr))
	rc := (&testServer{addr: addr}).dialRaw(t)
	if _, err := rc.nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	expectError(rc, "FATAL", "08P01")
	rc.expectClosed()
}
