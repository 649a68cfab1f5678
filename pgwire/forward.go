package pgwire

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/metrics"
	"streamdb/sqlerr"
)

// Request codes of the startup packets the forwarder tells apart.
const (
	cancelRequestCode = 1234<<16 | 5678
	sslRequestCode    = 1234<<16 | 5679
	gssEncRequestCode = 1234<<16 | 5680
	// maxStartupPacket bounds a startup packet, as pgproto3 does.
	maxStartupPacket = 10000
	// forwardDialTimeout bounds the connection to the coordinator.
	forwardDialTimeout = 5 * time.Second
)

// ForwardTarget says where a member sends sessions now: the coordinator's
// host:port, or the refusal to send when there is none to send them to
// (none known yet, this server taking over). It must never name this
// server itself.
type ForwardTarget func() (addr string, refusal *pgproto3.ErrorResponse)

// A Forwarder serves the PostgreSQL port of a cluster member that is not
// the coordinator: it relays each client connection to the coordinator,
// byte for byte once the client's first packets are read. TLS and
// authentication are therefore end to end: the coordinator answers the
// SSLRequest, runs the TLS handshake with the client (whose certificate
// checks name the coordinator's certificate) and the SCRAM exchange, with
// channel binding, exactly as for a direct client. What the coordinator
// cannot see is the client's address (it sees this member's), so the
// member applies the address rules itself first (Security.Admission):
// with ssl_require_remote a remote client must ask for TLS, and without
// a password only a client on the member's loopback is let through (the
// coordinator then applies its own rules to the member's address, which
// only ever refuses more).
type Forwarder struct {
	sec    Security
	target ForwardTarget
	log    *slog.Logger

	mu     sync.Mutex
	closed bool
	ups    map[*upstream]struct{} // every open connection to a coordinator
	ln     net.Listener
	wg     sync.WaitGroup
}

// NewForwarder makes a forwarder applying sec's address rules and
// sending sessions where target says.
func NewForwarder(sec Security, target ForwardTarget, log *slog.Logger) *Forwarder {
	return &Forwarder{sec: sec, target: target, log: log, ups: map[*upstream]struct{}{}}
}

// Serve accepts connections on ln, each in its own goroutine, until Close.
func (f *Forwarder) Serve(ln net.Listener) {
	f.mu.Lock()
	f.ln = ln
	f.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				time.Sleep(5 * time.Millisecond) // a temporary failure (out of descriptors)
				continue
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.handle(c)
			}()
		}
	}()
}

// Close stops accepting, ends every relayed session and waits for them.
func (f *Forwarder) Close() error {
	f.mu.Lock()
	f.closed = true
	var err error
	if f.ln != nil {
		err = f.ln.Close()
	}
	f.mu.Unlock()
	f.CutExcept("")
	f.wg.Wait()
	return err
}

// CutExcept ends every relayed session whose coordinator is not addr
// (every one when addr is ""), its startup included: the lease moved,
// and a session on the old coordinator, perhaps paused rather than dead,
// must not hang. A client
// in the clear gets FATAL 57P01 when the cut falls between two messages;
// otherwise (TLS, or mid-message) its connection closes, which drivers
// report as a lost connection (08006).
func (f *Forwarder) CutExcept(addr string) {
	f.mu.Lock()
	var cut []*upstream
	for up := range f.ups {
		if addr == "" || up.addr != addr {
			cut = append(cut, up)
		}
	}
	f.mu.Unlock()
	for _, up := range cut {
		up.cut()
	}
}

// Sessions is the number of connections relayed now (starting or
// running).
func (f *Forwarder) Sessions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ups)
}

// handle reads the client's startup packets until it can relay the
// connection, then relays it.
func (f *Forwarder) handle(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(startupTimeout))
	var up *upstream
	defer func() {
		if up != nil {
			f.release(up)
		}
	}()
	for negotiations := 0; ; negotiations++ {
		pkt, err := readStartupPacket(c)
		if errors.Is(err, errStartupLength) {
			sendFatal(c, errorResponse(sqlerr.New(sqlerr.ProtocolViolation, "%v", err), "FATAL"))
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				f.log.Debug("pgwire: forwarding: reading the client's startup packet", "remote", c.RemoteAddr().String(), "err", err)
			}
			return
		}
		code := binary.BigEndian.Uint32(pkt[4:8])
		switch {
		case isForwardMark(pkt):
			sendFatal(c, &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlerr.CannotConnectNow,
				Message: "the database system is not its cluster's coordinator: another member forwarded this session here",
				Hint:    "The members disagree for a moment about which server is the coordinator (its lease is moving): retry shortly."})
			return
		case code == cancelRequestCode:
			f.forwardCancel(pkt)
			return
		case code == sslRequestCode || code == gssEncRequestCode:
			if negotiations >= maxNegotiations {
				sendFatal(c, errorResponse(sqlerr.New(sqlerr.ProtocolViolation, "too many encryption requests"), "FATAL"))
				return
			}
			if _, refusal := f.sec.Admission(c.RemoteAddr(), true); refusal != nil && code == sslRequestCode {
				// Refused whatever the encryption: say so over TLS when
				// this member can, as the coordinator would.
				f.refuseOverTLS(c, errorResponse(refusal, "FATAL"))
				return
			}
			if up == nil {
				var refusal *pgproto3.ErrorResponse
				if up, refusal = f.dial(); refusal != nil {
					// No coordinator: go on in the clear, so that the
					// refusal reaches the client at its startup.
					if _, err := c.Write([]byte{'N'}); err != nil {
						return
					}
					continue
				}
			}
			answer, err := up.request(pkt)
			if err != nil {
				f.log.Info("pgwire: forwarding: the coordinator did not answer an encryption request", "coordinator", up.addr, "err", err)
				return
			}
			if _, err := c.Write([]byte{answer}); err != nil {
				return
			}
			if answer != 'N' {
				// TLS (or whatever else the coordinator agreed to) runs
				// between the client and the coordinator from here.
				f.relay(c, up, false)
				return
			}
		default:
			// A StartupMessage (or anything else, which the coordinator
			// answers as it would answer the client directly).
			if _, refusal := f.sec.Admission(c.RemoteAddr(), false); refusal != nil {
				f.log.Warn("pgwire: connection refused", "remote", c.RemoteAddr().String(), "reason", refusal.Message)
				sendFatal(c, errorResponse(refusal, "FATAL"))
				return
			}
			if up == nil {
				var refusal *pgproto3.ErrorResponse
				if up, refusal = f.dial(); refusal != nil {
					sendFatal(c, refusal)
					return
				}
			}
			if _, err := up.conn.Write(pkt); err != nil {
				sendFatal(c, unreachable(up.addr, err))
				return
			}
			f.relay(c, up, true)
			return
		}
	}
}

// upstream is a connection to the coordinator at addr, its mark sent,
// registered with the forwarder from the dial to its release.
type upstream struct {
	addr   string
	conn   net.Conn
	wasCut atomic.Bool
}

// cut ends the connection from the forwarder's side.
func (u *upstream) cut() {
	u.wasCut.Store(true)
	u.conn.Close()
}

// release closes the connection and forgets it.
func (f *Forwarder) release(up *upstream) {
	f.mu.Lock()
	delete(f.ups, up)
	f.mu.Unlock()
	up.conn.Close()
}

// dial connects to the coordinator, sends the mark and registers the
// connection, so that a move of the lease cuts it from now on.
func (f *Forwarder) dial() (*upstream, *pgproto3.ErrorResponse) {
	addr, refusal := f.target()
	if refusal != nil {
		return nil, refusal
	}
	nc, err := net.DialTimeout("tcp", addr, forwardDialTimeout)
	if err == nil {
		nc.SetDeadline(time.Now().Add(startupTimeout))
		_, err = nc.Write(forwardMark)
	}
	if err != nil {
		if nc != nil {
			nc.Close()
		}
		f.log.Info("pgwire: forwarding: the coordinator cannot be reached", "coordinator", addr, "err", err)
		return nil, unreachable(addr, err)
	}
	up := &upstream{addr: addr, conn: nc}
	f.mu.Lock()
	closed := f.closed
	if !closed {
		f.ups[up] = struct{}{}
	}
	f.mu.Unlock()
	if closed {
		nc.Close()
		return nil, unreachable(addr, net.ErrClosed)
	}
	if now, _ := f.target(); now != addr {
		up.cut() // the lease moved while this dialled
	}
	return up, nil
}

// request sends an encryption request and reads the one-byte answer.
func (u *upstream) request(pkt []byte) (byte, error) {
	if _, err := u.conn.Write(pkt); err != nil {
		return 0, err
	}
	var b [1]byte
	_, err := io.ReadFull(u.conn, b[:])
	return b[0], err
}

// forwardCancel passes a CancelRequest to the coordinator: the key in it
// is the coordinator's (sessions through any member run there). As in
// PostgreSQL the requester gets no answer either way.
func (f *Forwarder) forwardCancel(pkt []byte) {
	up, refusal := f.dial()
	if refusal != nil {
		return
	}
	defer f.release(up)
	if _, err := up.conn.Write(pkt); err == nil {
		metrics.SessionsForwarded.WithLabelValues("cancel").Inc()
	}
	// Wait for the coordinator to close its end, so the cancel is read
	// before this returns.
	up.conn.SetReadDeadline(time.Now().Add(forwardDialTimeout))
	io.Copy(io.Discard, up.conn)
}

// refuseOverTLS sends a refusal to a client that asked for TLS: over TLS
// when this member has a certificate, else after declining it.
func (f *Forwarder) refuseOverTLS(c net.Conn, refusal *pgproto3.ErrorResponse) {
	f.log.Warn("pgwire: connection refused", "remote", c.RemoteAddr().String(), "reason", refusal.Message)
	if f.sec.TLS == nil {
		if _, err := c.Write([]byte{'N'}); err != nil {
			return
		}
		if _, err := readStartupPacket(c); err != nil {
			return
		}
		sendFatal(c, refusal)
		return
	}
	if _, err := c.Write([]byte{'S'}); err != nil {
		return
	}
	tc := tls.Server(c, f.sec.TLS)
	if err := tc.Handshake(); err != nil {
		return
	}
	sendFatal(tc, refusal)
}

// errStartupLength: the first bytes are not a startup packet's length
// (not a PostgreSQL client, or a corrupted one).
var errStartupLength = errors.New("invalid length of startup packet")

// readStartupPacket reads one startup packet whole, its length included,
// without reading past it.
func readStartupPacket(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n < 8 || n > maxStartupPacket {
		return nil, fmt.Errorf("%w: %d bytes (a PostgreSQL client's first message is 8 to %d)", errStartupLength, n, maxStartupPacket)
	}
	pkt := make([]byte, n)
	copy(pkt, head[:])
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		return nil, err
	}
	return pkt, nil
}

// sendFatal writes one FATAL error to w.
func sendFatal(w net.Conn, e *pgproto3.ErrorResponse) {
	buf, err := e.Encode(nil)
	if err != nil {
		return
	}
	w.SetWriteDeadline(time.Now().Add(fatalWriteTimeout))
	w.Write(buf)
}

// unreachable is the refusal when the coordinator cannot be reached.
func unreachable(addr string, err error) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlerr.CannotConnectNow,
		Message: fmt.Sprintf("the database system is a cluster member and cannot reach its coordinator %s: %v", addr, err),
		Hint:    "Retry shortly: when the coordinator is gone, another member takes over once its lease expires."}
}

// relay copies both ways until either side ends. framed: the client is
// in the clear, so the forwarder follows the coordinator's message
// boundaries and, when the coordinator goes away between two messages
// without saying why, tells the client with FATAL 57P01.
func (f *Forwarder) relay(client net.Conn, up *upstream, framed bool) {
	metrics.SessionsForwarded.WithLabelValues("session").Inc()
	client.SetDeadline(time.Time{})
	up.conn.SetDeadline(time.Time{})

	var clientGone atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, rerr := client.Read(buf)
			if n > 0 {
				if _, werr := up.conn.Write(buf[:n]); werr != nil {
					break
				}
			}
			if rerr != nil {
				clientGone.Store(true)
				break
			}
		}
		up.conn.Close()
	}()
	var fr frames
	var err error
	if framed {
		_, err = io.Copy(writerFunc(func(p []byte) (int, error) {
			fr.advance(p)
			return client.Write(p)
		}), up.conn)
	} else {
		_, err = io.Copy(client, up.conn)
	}
	if framed && !clientGone.Load() && fr.atBoundary() && fr.last != 'E' {
		why := fmt.Sprintf("the connection to the cluster's coordinator %s was lost", up.addr)
		if up.wasCut.Load() {
			why = fmt.Sprintf("the cluster's coordinator is no longer %s", up.addr)
		}
		if err != nil && !up.wasCut.Load() {
			why += ": " + err.Error()
		}
		sendFatal(client, &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlerr.AdminShutdown,
			Message: "terminating connection: " + why,
			Hint:    "Reconnect: every server of the cluster sends new sessions to the coordinator."})
	}
	client.Close()
	<-done
}

// writerFunc adapts a function to io.Writer.
type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }

// frames follows the boundaries of backend messages (a type byte, a
// 4-byte length counting itself, the body) in a byte stream.
type frames struct {
	head  [5]byte
	nhead int   // bytes of the current header seen
	body  int64 // bytes of the current body still to come
	last  byte  // type of the last message begun
}

func (f *frames) advance(p []byte) {
	for len(p) > 0 {
		if f.body > 0 {
			k := min(f.body, int64(len(p)))
			f.body -= k
			p = p[k:]
			continue
		}
		f.head[f.nhead] = p[0]
		f.nhead++
		p = p[1:]
		if f.nhead == len(f.head) {
			f.nhead = 0
			f.last = f.head[0]
			f.body = max(0, int64(binary.BigEndian.Uint32(f.head[1:]))-4)
		}
	}
}

// atBoundary reports whether the stream is between two messages.
func (f *frames) atBoundary() bool { return f.nhead == 0 && f.body == 0 }
