package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"streamdb/metrics"
)

// ErrServerClosed is returned by Serve once Shutdown or Close has been called.
var ErrServerClosed = errors.New("pgwire: server closed")

// closeGrace is how long Close lets connections say goodbye (FATAL 57P01)
// before it closes their sockets.
const closeGrace = time.Second

// Server accepts PostgreSQL client connections and serves each one, in its
// own goroutine, with its own Engine Session. A misbehaving client (garbage
// bytes, a disconnect mid-query, a panic in its handler) only ever loses its
// own connection.
type Server struct {
	engine Engine
	log    *slog.Logger

	// Set by SetSecurity before Serve, read-only afterwards.
	sec        Security
	cbData     []byte // tls-server-end-point binding data of sec.TLS's certificate
	mockSecret []byte // salts the mock SCRAM exchange of unknown users

	// baseCtx is the parent of every connection's context. Shutdown cancels
	// it with errShutdown as the cause, which interrupts running queries.
	baseCtx    context.Context
	cancelBase context.CancelCauseFunc
	done       chan struct{} // closed by the first Shutdown

	// maxSessions bounds the sessions past startup (0: no bound);
	// sessions counts them. See admit. Of maxSessions, reservedSessions
	// are kept for superusers (see reservedFull).
	maxSessions      atomic.Int64
	reservedSessions atomic.Int64
	sessions         atomic.Int64
	// maxQueryLength bounds a statement's text (SetMaxQueryLength).
	maxQueryLength atomic.Int64

	mu        sync.Mutex
	closing   bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	keys      map[uint32]*conn // live connections by BackendKeyData pid
	wg        sync.WaitGroup   // one per connection goroutine
}

// NewServer returns a Server that creates sessions on engine. A nil logger
// means slog.Default().
func NewServer(engine Engine, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	mockSecret := make([]byte, 32)
	rand.Read(mockSecret)
	s := &Server{
		engine:     engine,
		log:        logger,
		mockSecret: mockSecret,
		baseCtx:    ctx,
		cancelBase: cancel,
		done:       make(chan struct{}),
		listeners:  make(map[net.Listener]struct{}),
		conns:      make(map[*conn]struct{}),
		keys:       make(map[uint32]*conn),
	}
	s.maxQueryLength.Store(DefaultMaxQueryLength)
	return s
}

// Security says how clients authenticate and whether they may use TLS. The
// zero value is what a server without --tls-cert and without a password
// does: SSLRequest is declined, loopback clients are trusted and everyone
// else is refused.
type Security struct {
	// TLS, when set, makes the server answer SSLRequest with 'S' and run
	// TLS with this configuration.
	TLS *tls.Config
	// RequireTLSRemote refuses connections that did not negotiate TLS
	// unless they come from loopback (28000).
	RequireTLSRemote bool
	// Auth, when set, makes every connection (loopback too) authenticate
	// with SCRAM-SHA-256 against the verifiers it holds. When nil, loopback
	// connections are trusted and others refused.
	Auth Authenticator
}

// Authenticator looks up the password verifier of a user. The engine
// supplies it (a fixed bootstrap superuser today; its catalog of users
// once there are users).
type Authenticator interface {
	// SCRAMVerifier returns user's SCRAM-SHA-256 verifier. A nil verifier
	// (and nil error) means the user does not exist or may not log in:
	// the client then runs a mock exchange and fails with 28P01, as for
	// a wrong password. An error is sent to the client as FATAL.
	SCRAMVerifier(ctx context.Context, user string) (*SCRAMVerifier, error)
}

// StaticUsers is an Authenticator over a fixed map of user name to
// verifier.
type StaticUsers map[string]*SCRAMVerifier

// SCRAMVerifier implements Authenticator.
func (u StaticUsers) SCRAMVerifier(_ context.Context, user string) (*SCRAMVerifier, error) {
	return u[user], nil
}

// SetSecurity configures TLS and authentication. Call it before Serve.
func (s *Server) SetSecurity(sec Security) {
	s.sec = sec
	s.cbData = nil
	// Channel binding needs the certificate the client saw: with exactly
	// one configured certificate it is that one.
	if sec.TLS != nil && len(sec.TLS.Certificates) == 1 && sec.TLS.GetCertificate == nil {
		cert := sec.TLS.Certificates[0]
		leaf := cert.Leaf
		if leaf == nil && len(cert.Certificate) > 0 {
			leaf, _ = x509.ParseCertificate(cert.Certificate[0])
		}
		if leaf != nil {
			s.cbData = endPointHash(leaf)
		}
	}
}

// ListenAndServe listens on the TCP address addr and calls Serve.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln until the server is shut down (it then
// returns ErrServerClosed) or ln fails permanently. Serve closes ln on
// shutdown. It may be called for several listeners concurrently.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			var te interface{ Temporary() bool }
			if errors.As(err, &te) && te.Temporary() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("pgwire: accept failed; retrying", "err", err, "delay", backoff)
				select {
				case <-time.After(backoff):
					continue
				case <-s.done:
					return ErrServerClosed
				}
			}
			return err
		}
		backoff = 0
		s.startConn(nc)
	}
}

// SetMaxConnections bounds the client sessions served at once (0: no
// bound), as PostgreSQL's max_connections does: a session past it is
// refused with 53300 after its startup message. Cancel requests are not
// sessions and always get through.
func (s *Server) SetMaxConnections(n int) { s.maxSessions.Store(int64(n)) }

// SetSuperuserReservedConnections keeps n of the max_connections slots for
// superusers, as PostgreSQL's superuser_reserved_connections does: a
// session of another role is refused with 53300 when fewer than n slots
// are free. It counts only while max_connections bounds the sessions.
func (s *Server) SetSuperuserReservedConnections(n int) { s.reservedSessions.Store(int64(n)) }

// SuperuserSession is implemented by sessions that know whether their
// role is a superuser. A session that does not implement it is not one:
// it never takes a reserved slot.
type SuperuserSession interface {
	Superuser() bool
}

// reservedFull reports whether sess, just admitted, must be refused
// because only the slots reserved for superusers were left: its role is
// no superuser and fewer than superuser_reserved_connections slots are
// free counting its own as taken (PostgreSQL's HaveNFreeProcs check).
func (s *Server) reservedFull(sess Session) bool {
	limit, reserved := s.maxSessions.Load(), s.reservedSessions.Load()
	if limit <= 0 || reserved <= 0 {
		return false
	}
	if su, ok := sess.(SuperuserSession); ok && su.Superuser() {
		return false
	}
	return limit-s.sessions.Load() < reserved
}

// admit counts a new session, or reports false if the server is full.
func (s *Server) admit() bool {
	limit := s.maxSessions.Load()
	if n := s.sessions.Add(1); limit > 0 && n > limit {
		s.sessions.Add(-1)
		return false
	}
	return true
}

// socketsFor is how many sockets the server keeps open for a session bound:
// sessions plus room for connections still in startup and cancel
// requests. Past it, new sockets are closed at once, so that a flood of
// connections cannot use up the process's file descriptors.
func socketsFor(sessions int64) int { return int(2*sessions) + 64 }

func (s *Server) startConn(nc net.Conn) {
	c := newConn(s, nc)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if limit := s.maxSessions.Load(); limit > 0 && len(s.conns) >= socketsFor(limit) {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	metrics.Connections.Inc()
	s.log.Debug("pgwire: connection opened", "remote", nc.RemoteAddr().String())
	go func() {
		defer s.wg.Done()
		defer s.forget(c)
		c.serve()
	}()
}

func (s *Server) forget(c *conn) {
	metrics.Connections.Dec()
	s.log.Debug("pgwire: connection closed", "remote", c.nc.RemoteAddr().String(), "pid", c.pid)
	s.mu.Lock()
	delete(s.conns, c)
	if c.pid != 0 && s.keys[c.pid] == c {
		delete(s.keys, c.pid)
	}
	s.mu.Unlock()
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Shutdown stops accepting connections, cancels running queries and tells
// every connection to go away: each one sends its client a FATAL 57P01
// ErrorResponse and closes. Shutdown waits for the connections to finish;
// if ctx ends first it closes the remaining sockets and returns ctx.Err().
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		close(s.done)
	}
	for ln := range s.listeners {
		ln.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	s.cancelBase(errShutdown)
	for _, c := range conns {
		c.interrupt()
	}

	finished := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		for _, c := range conns {
			c.nc.Close()
		}
		return ctx.Err()
	}
}

// Close shuts the server down like Shutdown, but closes the sockets of
// connections that have not finished after a short grace period.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
