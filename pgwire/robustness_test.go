package pgwire_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/pgwire"
)

func selectOK(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	var n int32
	if err := conn.QueryRow(testContext(t), "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("select 1: %d, %v", n, err)
	}
}

func TestGarbageBeforeStartup(t *testing.T) {
	ts := startServer(t)
	other := ts.connect(t, pgx.QueryExecModeCacheStatement)
	for _, junk := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"\x00\x00\x00\x08\x00\x02\x00\x00", // protocol 2.0
		"\x16\x03\x01\x02\x00\x01\x00\x01", // TLS ClientHello
		"\x00\x00\x00\x03",                 // length too short
	} {
		rc := ts.dialRaw(t)
		if _, err := rc.nc.Write([]byte(junk)); err != nil {
			t.Fatal(err)
		}
		expectError(rc, "FATAL", "08P01")
		rc.expectClosed()
	}
	selectOK(t, other)
	selectOK(t, ts.connect(t, pgx.QueryExecModeSimpleProtocol))
}

func TestGarbageAfterStartup(t *testing.T) {
	ts := startServer(t)
	other := ts.connect(t, pgx.QueryExecModeCacheStatement)
	before := ts.eng.openSessions()

	rc, _ := ts.rawConnect(t)
	if _, err := rc.nc.Write([]byte("\x01\x00\x00\x00\x08junk")); err != nil {
		t.Fatal(err)
	}
	expectError(rc, "FATAL", "08P01")
	rc.expectClosed()

	// A malformed message of a known type.
	rc, _ = ts.rawConnect(t)
	if _, err := rc.nc.Write([]byte("B\x00\x00\x00\x06ab")); err != nil {
		t.Fatal(err)
	}
	expectError(rc, "FATAL", "08P01")
	rc.expectClosed()

	// A message that is only legal during authentication.
	rc, _ = ts.rawConnect(t)
	rc.send(&pgproto3.PasswordMessage{Password: "secret"})
	expectError(rc, "FATAL", "08P01")
	rc.expectClosed()

	waitFor(t, "sessions to close", func() bool { return ts.eng.openSessions() == before })
	selectOK(t, other)
}

func TestPanicIsolated(t *testing.T) {
	ts := startServer(t)
	other := ts.connect(t, pgx.QueryExecModeCacheStatement)
	victim := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	_, err := victim.Exec(testContext(t), "panic")
	if pgCode(err) != "XX000" {
		t.Fatalf("got %v, want a FATAL XX000", err)
	}
	if !victim.IsClosed() {
		// pgx notices the closed socket on the next use at the latest.
		if _, err := victim.Exec(testContext(t), "select 1"); err == nil {
			t.Fatal("the connection that panicked is still usable")
		}
	}
	waitFor(t, "the panicked session to close", func() bool { return ts.eng.openSessions() == 1 })
	selectOK(t, other)
}

func TestDisconnectMidQuery(t *testing.T) {
	ts := startServer(t)
	other := ts.connect(t, pgx.QueryExecModeCacheStatement)

	// The client asks for many rows and goes away without reading them.
	rc, _ := ts.rawConnect(t)
	rc.send(&pgproto3.Query{String: "series 1000000"})
	rc.nc.Close()

	// The client goes away while its query blocks.
	rc, key := ts.rawConnect(t)
	rc.send(&pgproto3.Query{String: "sleep"})
	ts.waitStarted(t)
	rc.nc.Close()
	ts.sendCancel(t, key) // nothing notices a dead idle socket until it is used

	waitFor(t, "abandoned sessions to close", func() bool { return ts.eng.openSessions() == 1 })
	selectOK(t, other)
}

func TestShutdown(t *testing.T) {
	ts := startServer(t)
	idle, _ := ts.rawConnect(t)
	busy, _ := ts.rawConnect(t)
	busy.send(&pgproto3.Query{String: "sleep"})
	ts.waitStarted(t)
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := ts.serveResult(t); !errors.Is(err, pgwire.ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	for _, rc := range []*rawConn{idle, busy} {
		expectError(rc, "FATAL", "57P01")
		rc.expectClosed()
	}
	if _, err := conn.Exec(testContext(t), "select 1"); err == nil {
		t.Fatal("query succeeded after shutdown")
	}
	if n := ts.eng.openSessions(); n != 0 {
		t.Fatalf("%d sessions still open", n)
	}
	// No new connections.
	if _, err := pgconn.Connect(testContext(t), ts.connString()); err == nil {
		t.Fatal("connected after shutdown")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.srv.Serve(ln); !errors.Is(err, pgwire.ErrServerClosed) {
		t.Fatalf("Serve after shutdown: %v", err)
	}
	// Close after Shutdown is harmless.
	if err := ts.srv.Close(); err != nil {
		t.Fatal(err)
	}
}
