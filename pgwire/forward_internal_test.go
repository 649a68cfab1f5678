package pgwire

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// remoteConn is one end of a pipe that says it comes from another host.
type remoteConn struct{ net.Conn }

func (remoteConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40000}
}

// A member applies the address rules to the client's own address, which
// the coordinator never sees: without a password, a client on another
// host is refused before anything is forwarded.
func TestForwarderAppliesAddressRulesToTheClient(t *testing.T) {
	dialed := false
	f := NewForwarder(Security{}, func() (string, *pgproto3.ErrorResponse) {
		dialed = true
		return "127.0.0.1:1", nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	client, member := net.Pipe()
	defer client.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.handle(remoteConn{member})
	}()
	client.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(client, client)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	msg, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := msg.(*pgproto3.ErrorResponse)
	if !ok || e.Code != "28000" {
		t.Fatalf("a remote client without a password: %#v, want 28000", msg)
	}
	<-done
	if dialed {
		t.Fatal("the refused client's session was forwarded")
	}
}

func TestFramesFollowMessageBoundaries(t *testing.T) {
	var f frames
	// 'Z' length 5 body 'I', then the first 3 bytes of a 'D' header.
	f.advance([]byte{'Z', 0, 0, 0, 5, 'I', 'D', 0, 0})
	if f.atBoundary() {
		t.Fatal("inside a header: at a boundary")
	}
	f.advance([]byte{0, 6, 'a'})
	if f.atBoundary() || f.last != 'D' {
		t.Fatalf("inside a body: boundary %v, last %c", f.atBoundary(), f.last)
	}
	f.advance([]byte{'b'})
	if !f.atBoundary() {
		t.Fatal("after a whole message: not at a boundary")
	}
}
