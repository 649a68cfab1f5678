package pgwire_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/pgwire"
)

// testTimeout bounds every wait in the tests: nothing sleeps to
// synchronise, but nothing may hang either.
const testTimeout = 15 * time.Second

type testServer struct {
	srv  *pgwire.Server
	eng  *fakeEngine
	addr string

	serveOnce sync.Once
	served    chan error
	serveErr  error
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	var out io.Writer = io.Discard
	if testing.Verbose() {
		out = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{
		eng:    newFakeEngine(),
		addr:   ln.Addr().String(),
		served: make(chan error, 1),
	}
	ts.srv = pgwire.NewServer(ts.eng, logger)
	go func() { ts.served <- ts.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := ts.srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := ts.serveResult(t); !errors.Is(err, pgwire.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return ts
}

// serveResult waits for Serve to return.
func (ts *testServer) serveResult(t *testing.T) error {
	ts.serveOnce.Do(func() {
		select {
		case ts.serveErr = <-ts.served:
		case <-time.After(testTimeout):
			t.Error("Serve did not return")
		}
	})
	return ts.serveErr
}

func (ts *testServer) connString() string {
	return "postgres://tester@" + ts.addr + "/db?sslmode=disable&application_name=pgwire_test"
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a pgx connection using the given query mode.
func (ts *testServer) connect(t *testing.T, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(ts.connString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	return ts.connectConfig(t, cfg)
}

func (ts *testServer) connectConfig(t *testing.T, cfg *pgx.ConnConfig) *pgx.Conn {
	t.Helper()
	conn, err := pgx.ConnectConfig(testContext(t), cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// rawConn is a client speaking the protocol message by message.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
}

// dialRaw opens a TCP connection without any handshake.
func (ts *testServer) dialRaw(t *testing.T) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// rawConnect opens a connection and completes the startup handshake.
func (ts *testServer) rawConnect(t *testing.T) (*rawConn, *pgproto3.BackendKeyData) {
	t.Helper()
	rc := ts.dialRaw(t)
	rc.send(&pgproto3.StartupMessage{
		ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters:      map[string]string{"user": "tester", "database": "db"},
	})
	var key pgproto3.BackendKeyData
	for {
		switch m := rc.receive().(type) {
		case *pgproto3.BackendKeyData:
			key = pgproto3.BackendKeyData{ProcessID: m.ProcessID, SecretKey: append([]byte(nil), m.SecretKey...)}
		case *pgproto3.ReadyForQuery:
			return rc, &key
		case *pgproto3.ErrorResponse:
			t.Fatalf("startup failed: %+v", m)
		}
	}
}

func (rc *rawConn) send(msgs ...pgproto3.FrontendMessage) {
	rc.t.Helper()
	for _, m := range msgs {
		rc.fe.Send(m)
	}
	if err := rc.fe.Flush(); err != nil {
		rc.t.Fatalf("send: %v", err)
	}
}

func (rc *rawConn) receive() pgproto3.BackendMessage {
	rc.t.Helper()
	m, err := rc.fe.Receive()
	if err != nil {
		rc.t.Fatalf("receive: %v", err)
	}
	return m
}

// expect receives one message and checks its type.
func expect[T pgproto3.BackendMessage](rc *rawConn) T {
	rc.t.Helper()
	m := rc.receive()
	got, ok := m.(T)
	if !ok {
		var want T
		rc.t.Fatalf("got %T %+v, want %T", m, m, want)
	}
	return got
}

// expectError receives an ErrorResponse and checks its severity and code.
func expectError(rc *rawConn, severity, code string) *pgproto3.ErrorResponse {
	rc.t.Helper()
	e := expect[*pgproto3.ErrorResponse](rc)
	if e.Severity != severity || e.Code != code {
		rc.t.Fatalf("got %s %s %q, want %s %s", e.Severity, e.Code, e.Message, severity, code)
	}
	return e
}

// expectClosed checks that the server closed the connection.
func (rc *rawConn) expectClosed() {
	rc.t.Helper()
	if m, err := rc.fe.Receive(); err == nil {
		rc.t.Fatalf("got %T %+v, want the connection closed", m, m)
	}
}

// pgCode returns the SQLSTATE of a pgx error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// waitFor polls cond until it holds or the test times out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // poll interval, under the deadline above
	}
}

// waitStarted waits for the fake engine to report a running sleep.
func (ts *testServer) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-ts.eng.started:
	case <-time.After(testTimeout):
		t.Fatal("sleep did not start")
	}
}

// sendCancel sends a raw CancelRequest.
func (ts *testServer) sendCancel(t *testing.T, key *pgproto3.BackendKeyData) {
	t.Helper()
	rc := ts.dialRaw(t)
	buf := binary.BigEndian.AppendUint32(nil, uint32(12+len(key.SecretKey)))
	buf = binary.BigEndian.AppendUint32(buf, 80877102)
	buf = binary.BigEndian.AppendUint32(buf, key.ProcessID)
	buf = append(buf, key.SecretKey...)
	if _, err := rc.nc.Write(buf); err != nil {
		t.Fatal(err)
	}
	rc.expectClosed()
}

type pgconnResult = pgconn.Result

func read(rr *pgconn.ResultReader) *pgconn.Result { return rr.Read() }
