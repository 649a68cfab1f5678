package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/metrics"
	"streamdb/sqlerr"
)

const (
	// maxMessageSize bounds the body of one frontend message.
	maxMessageSize = 64 << 20
	// fatalWriteTimeout bounds the last write to a client before closing.
	fatalWriteTimeout = 5 * time.Second
)

// conn serves one client connection. Everything except the fields under mu
// is owned by the connection's goroutine (serve).
type conn struct {
	srv *Server
	// nc is the client's socket. Deadlines and Close act on it even after
	// TLS starts; messages then go through tls instead.
	nc  net.Conn
	tls *tls.Conn // set once an SSLRequest started TLS
	// inBytes counts what the Backend has read from nc before TLS, so
	// startup can tell whether the client sent anything after its
	// SSLRequest.
	inBytes *countingReader
	be      *pgproto3.Backend
	w       *msgWriter
	log     *slog.Logger
	// ctx is cancelled with cause errShutdown when the server shuts down.
	ctx context.Context

	sess   Session
	pid    uint32 // BackendKeyData, set by Server.register
	secret []byte
	// backend is what pg_stat_activity shows of the connection, set with
	// pid.
	backend *Backend

	// Extended-protocol state.
	stmts   map[string]*statement
	portals map[string]*portal
	// ignoreTillSync is set by an error in an extended-protocol message:
	// every message but Sync and Terminate is then discarded.
	ignoreTillSync bool
	// quit ends the connection loop after the current message.
	quit bool
	// hangup looks for the client hanging up while an engine call runs
	// (watchDisconnect); nil until the first call.
	hangup *time.Timer

	mu        sync.Mutex
	closing   bool                    // set by interrupt (Shutdown)
	cancelRun context.CancelCauseFunc // non-nil while an engine call runs
	// admitted: the connection holds one of the server's sessions (admit).
	admitted bool
	// idleTimeout, when set, bounds the wait for the next message: the
	// session is idle in a transaction block (IdleInTransactionTimeouter).
	idleTimeout time.Duration
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:     s,
		nc:      nc,
		w:       newMsgWriter(nc),
		log:     s.log.With("remote", nc.RemoteAddr().String()),
		ctx:     s.baseCtx,
		stmts:   make(map[string]*statement),
		portals: make(map[string]*portal),
	}
	c.inBytes = &countingReader{r: nc}
	c.be = pgproto3.NewBackend(c.inBytes, nc)
	c.be.SetMaxBodyLen(s.maxBodyLen())
	return c
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	return n, err
}

// serve runs the connection to completion: startup, then one frontend
// message at a time. A panic is contained here: it is logged, the client
// gets a FATAL error and only this connection is closed.
func (c *conn) serve() {
	defer c.finish()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("pgwire: connection handler panicked", "panic", r, "stack", string(debug.Stack()))
			c.sendFatal(&sqlerr.Error{Code: sqlerr.InternalError, Message: fmt.Sprintf("internal error: %v", r)})
		}
	}()
	if !c.startup() {
		return
	}
	for !c.quit {
		idle := c.idleTimeout
		if idle > 0 {
			c.setReadDeadline(time.Now().Add(idle))
		}
		msg, err := c.be.Receive()
		if idle > 0 {
			c.idleTimeout = 0
			var ne net.Error
			if err != nil && errors.As(err, &ne) && ne.Timeout() && !c.isClosing() {
				c.log.Info("pgwire: idle in transaction too long", "timeout", idle)
				c.sendFatal(sqlerr.New(sqlerr.IdleInTransactionTimeout, "terminating connection due to idle-in-transaction timeout"))
				return
			}
			c.setReadDeadline(time.Time{})
		}
		if err != nil {
			c.readFailed(err)
			return
		}
		c.dispatch(msg)
		if c.w.err != nil {
			c.log.Debug("pgwire: write to client failed", "err", c.w.err)
			return
		}
	}
}

// finish releases the session and closes the socket.
func (c *conn) finish() {
	c.backend.close()
	if c.admitted {
		c.srv.sessions.Add(-1)
	}
	if c.sess != nil {
		func() {
			defer func() {
				if r := recover(); r != nil {
					c.log.Error("pgwire: Session.Close panicked", "panic", r, "stack", string(debug.Stack()))
				}
			}()
			c.sess.Close()
		}()
	}
	c.nc.Close()
}

func (c *conn) dispatch(msg pgproto3.FrontendMessage) {
	if c.ignoreTillSync {
		switch msg.(type) {
		case *pgproto3.Sync, *pgproto3.Terminate:
		default:
			return
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		c.simpleQuery(m.String)
	case *pgproto3.Parse:
		c.parse(m)
	case *pgproto3.Bind:
		c.bind(m)
	case *pgproto3.Describe:
		c.describe(m)
	case *pgproto3.Execute:
		c.execute(m)
	case *pgproto3.Close:
		c.closeObject(m)
	case *pgproto3.Sync:
		c.sync()
	case *pgproto3.Flush:
		c.w.flush()
	case *pgproto3.Terminate:
		c.quit = true
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Ignored outside COPY, as PostgreSQL does.
	case *pgproto3.FunctionCall:
		c.sendError(sqlerr.New(sqlerr.FeatureNotSupported, "the function call protocol is not supported"))
		c.readyForQuery()
	default:
		c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "unexpected message %T", msg))
	}
}

// readFailed ends the connection after Receive failed.
func (c *conn) readFailed(err error) {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	var ne net.Error
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	switch {
	case closing:
		c.sendFatal(errShutdown)
	case errors.As(err, &tooLong):
		c.log.Info("pgwire: message too long", "bytes", tooLong.ActualBodyLen)
		c.sendFatal(sqlerr.New(sqlerr.StatementTooComplex, "message of %d bytes is too long: the server reads at most %d (max_query_length %d)",
			tooLong.ActualBodyLen, tooLong.MaxExpectedBodyLen, c.srv.maxQueryLength.Load()))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		c.log.Debug("pgwire: client disconnected", "err", err)
	case errors.As(err, &ne) && ne.Timeout():
		c.log.Info("pgwire: client timed out", "err", err)
		c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "timeout waiting for the client"))
	case errors.As(err, new(*net.OpError)):
		c.log.Debug("pgwire: connection failed", "err", err)
	default:
		c.log.Info("pgwire: protocol violation", "err", err)
		c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "invalid frontend message: %v", err))
	}
}

// sendError sends err as an ERROR. Shutdown errors are sent as FATAL and
// end the connection.
func (c *conn) sendError(err error) {
	e := sqlerr.From(err)
	if e == errShutdown {
		c.sendFatal(e)
		return
	}
	metrics.Queries.WithLabelValues(metrics.QueryOutcome(e.Code)).Inc()
	if e.Code == sqlerr.InternalError || e.Code == "" {
		c.log.Warn("pgwire: internal error", "err", err)
	} else {
		c.log.Debug("pgwire: client error", "pid", c.pid, "sqlstate", e.Code, "err", e.Message)
	}
	c.w.send(errorResponse(e, "ERROR"))
}

// sendFatal sends e as a FATAL error, flushes, and ends the connection.
func (c *conn) sendFatal(e *sqlerr.Error) {
	c.quit = true
	c.nc.SetWriteDeadline(time.Now().Add(fatalWriteTimeout))
	c.w.send(errorResponse(e, "FATAL"))
	c.w.flush()
}

// readyForQuery ends a query cycle and flushes.
func (c *conn) readyForQuery() {
	if c.quit {
		return
	}
	status := c.sess.TxStatus()
	c.backend.idle(status)
	c.w.send(&pgproto3.ReadyForQuery{TxStatus: status})
	if t, ok := c.sess.(IdleInTransactionTimeouter); ok && status != 'I' {
		c.idleTimeout = t.IdleInTransactionTimeout()
	}
	c.w.flush()
}

// isClosing reports whether Shutdown interrupted the connection.
func (c *conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// setReadDeadline sets the socket read deadline unless the server is
// shutting down (interrupt's deadline in the past must stay).
func (c *conn) setReadDeadline(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closing {
		c.nc.SetReadDeadline(t)
	}
}

// interrupt is called by Shutdown from another goroutine. Setting a read
// deadline in the past wakes the connection if it is waiting for the
// client; it then says goodbye (readFailed) from its own goroutine, so that
// only one goroutine ever writes to the socket. The write deadline frees a
// connection stuck writing to a client that does not read.
func (c *conn) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	c.nc.SetReadDeadline(time.Unix(1, 0))
	c.nc.SetWriteDeadline(time.Now().Add(fatalWriteTimeout))
}
