package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"math"
)

// register gives c a BackendKeyData (pid, secret) unique among the live
// connections, so that a CancelRequest can find it.
func (s *Server) register(c *conn) {
	secret := make([]byte, 4)
	rand.Read(secret)
	var b [4]byte
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		rand.Read(b[:])
		// Positive int32: some drivers read the pid as a signed integer.
		pid := binary.BigEndian.Uint32(b[:]) % math.MaxInt32
		if pid == 0 || s.keys[pid] != nil {
			continue
		}
		c.pid, c.secret = pid, secret
		s.keys[pid] = c
		return
	}
}

// cancel handles a CancelRequest: it interrupts the query running on the
// connection with the given key, if any. As in PostgreSQL, the requester
// gets no answer, and a request for an idle connection is dropped.
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.keys[pid]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret, secret) != 1 {
		s.log.Debug("pgwire: ignoring cancel request with unknown key", "pid", pid)
		return
	}
	c.cancelQuery()
}

// beginRun returns the context for one engine call (Prepare or Execute) and
// a function that must be called when the call returns. Until then a
// CancelRequest for this connection cancels the context with errCanceled,
// and the client hanging up cancels it with errDisconnected.
func (c *conn) beginRun() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(c.ctx)
	c.mu.Lock()
	c.cancelRun = cancel
	c.mu.Unlock()
	c.watchDisconnect()
	return c.withNotices(ctx), func() {
		c.mu.Lock()
		c.cancelRun = nil
		c.mu.Unlock()
		c.stopWatch()
		cancel(nil)
	}
}

// cancelQuery cancels the engine call in progress, if there is one.
func (c *conn) cancelQuery() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancelRun != nil {
		c.cancelRun(errCanceled)
	}
}

// runError converts an error returned by an engine call made with ctx (from
// beginRun). If ctx was cancelled by a CancelRequest or by Shutdown, the
// engine's error (typically context.Canceled) is replaced by the matching
// PostgreSQL error.
func runError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause == errCanceled || cause == errShutdown || cause == errDisconnected {
		return cause
	}
	return err
}
