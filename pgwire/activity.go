package pgwire

import (
	"net"
	"sync"
	"time"
)

// Backend is what pg_stat_activity shows of one client connection: its
// BackendKeyData pid, where it connects from, and what it is doing. The
// connection updates it as statements run; readers call State from any
// goroutine.
type Backend struct {
	PID        uint32
	ClientAddr net.Addr
	Started    time.Time

	c *conn

	mu          sync.Mutex
	state       string
	query       string
	queryStart  time.Time
	stateChange time.Time
	closed      bool
}

// BackendState is a snapshot of a Backend's activity.
type BackendState struct {
	// State is PostgreSQL's: "active", "idle", "idle in transaction" or
	// "idle in transaction (aborted)".
	State string
	// Query is the statement running, or the last one when idle.
	Query                   string
	QueryStart, StateChange time.Time
	Closed                  bool
}

// BackendUser is implemented by sessions that want their connection's
// Backend (for pg_backend_pid and pg_stat_activity); the connection hands
// it over once it has its pid, before the first statement.
type BackendUser interface {
	SetBackend(b *Backend)
}

func newBackend(c *conn) *Backend {
	now := time.Now()
	return &Backend{PID: c.pid, ClientAddr: c.nc.RemoteAddr(), Started: now, c: c, state: "idle", stateChange: now}
}

// State returns the backend's current activity.
func (b *Backend) State() BackendState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BackendState{State: b.state, Query: b.query, QueryStart: b.queryStart, StateChange: b.stateChange, Closed: b.closed}
}

// Cancel cancels the statement the backend runs, as a CancelRequest does
// (pg_cancel_backend).
func (b *Backend) Cancel() { b.c.cancelQuery() }

// Terminate ends the backend's connection with FATAL 57P01 (as
// pg_terminate_backend does): a running statement is cancelled, an idle
// connection is woken from its read.
func (b *Backend) Terminate() {
	c := b.c
	c.interrupt()
	c.mu.Lock()
	if c.cancelRun != nil {
		c.cancelRun(errShutdown)
	}
	c.mu.Unlock()
}

// active records that the statement query started running.
func (b *Backend) active(query string) {
	if b == nil {
		return
	}
	now := time.Now()
	b.mu.Lock()
	b.state, b.query, b.queryStart, b.stateChange = "active", redactSecrets(query), now, now
	b.mu.Unlock()
}

// idle records that the connection waits for the client, with the
// ReadyForQuery status byte.
func (b *Backend) idle(status byte) {
	if b == nil {
		return
	}
	state := "idle"
	switch status {
	case 'T':
		state = "idle in transaction"
	case 'E':
		state = "idle in transaction (aborted)"
	}
	b.mu.Lock()
	if b.state != state {
		b.state, b.stateChange = state, time.Now()
	}
	b.mu.Unlock()
}

// close records that the connection is gone.
func (b *Backend) close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

// startBackend creates the connection's Backend once it has a pid and
// hands it to the session.
func (c *conn) startBackend() {
	c.backend = newBackend(c)
	if u, ok := c.sess.(BackendUser); ok {
		u.SetBackend(c.backend)
	}
}
