package pgwire

import (
	"syscall"
	"time"

	"streamdb/sqlerr"
)

// disconnectCheckInterval is how often a running statement looks at its
// client's socket for a hang-up (PostgreSQL's
// client_connection_check_interval, which streamdb always has on).
const disconnectCheckInterval = 100 * time.Millisecond

// errDisconnected is the cause of a statement context cancelled because
// its client went away; nobody reads the error, the connection then ends.
var errDisconnected = &sqlerr.Error{Code: sqlerr.QueryCanceled, Message: "canceling statement because the client disconnected"}

// watchDisconnect cancels the running engine call (cancelRun) with
// errDisconnected as soon as the client hangs up, until stopWatch. It only
// polls the socket for a hang-up and never reads from it, so that messages
// a client pipelines behind the running statement stay where the
// connection reads them. It is one timer per connection, armed per call:
// most statements end before the first look, and then it costs no more
// than arming and stopping it. Called by the connection's goroutine with
// cancelRun set.
func (c *conn) watchDisconnect() {
	if c.hangup == nil {
		sc, ok := c.nc.(syscall.Conn)
		if !ok {
			return
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return
		}
		c.hangup = time.AfterFunc(disconnectCheckInterval, func() { c.lookForHangup(raw) })
		return
	}
	c.hangup.Reset(disconnectCheckInterval)
}

// stopWatch stops watchDisconnect's looks. Called with cancelRun nil.
func (c *conn) stopWatch() {
	if c.hangup != nil {
		c.hangup.Stop()
	}
}

// lookForHangup is one look of watchDisconnect; it looks again later
// while an engine call runs.
func (c *conn) lookForHangup(raw syscall.RawConn) {
	closed := peerClosed(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancelRun == nil {
		return
	}
	if closed {
		c.log.Info("pgwire: client disconnected during a statement; cancelling it")
		c.cancelRun(errDisconnected)
		return
	}
	c.hangup.Reset(disconnectCheckInterval)
}
